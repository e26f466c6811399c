// A server whose server_name this machine cannot resolve (the default is the host's own name, often unknown to
// others): libzmq would retry such a host for ever without a word, so the load tester stops at once naming the
// cause, and push-jobs-client, which keeps trying as the original did, says why the server does not hear it. A
// name that resolves to where nothing listens: the tester says what to check when its --timeout passes.
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { until } from '../support/deadline.js';
import { childEnv, distBin, runBin } from '../support/process-run.js';
import { startServerProcess } from '../support/server-process.js';

// RFC 6761: names under .invalid never resolve.
const NOWHERE = 'push.no-such-host.invalid';

const server = await startServerProcess(t, { settings: { server_name: NOWHERE } });

t.test('the load tester stops before playing any node, naming the host and the setting', async (t) => {
  const run = await runBin(
    'infra-loadtest',
    ['--server', server.url, '--key', join(server.dataDir, 'admin.pem'), '--nodes', '4', '--timeout', '60'],
    { timeoutMs: 60_000 },
  );
  t.equal(run.code, 1);
  t.match(run.stderr, `tcp://${NOWHERE}:${server.ports.heartbeat}`);
  t.match(run.stderr, 'server_name');
  t.notMatch(run.stderr, '--timeout passed', 'it did not wait out --timeout');
});

t.test('push-jobs-client logs that it cannot resolve the host, and keeps running', async (t) => {
  const dir = t.testdir();
  await writeFile(join(dir, 'validator.pem'), await server.keyOf('default-validator'));
  const rb = join(dir, 'client.rb');
  await writeFile(
    rb,
    [
      `chef_server_url "${server.url}/organizations/default"`,
      'node_name "far-away"',
      `client_key "${join(dir, 'client.pem')}"`,
      `validation_key "${join(dir, 'validator.pem')}"`,
      `file_dir "${join(dir, 'files')}"`,
      `log_location "${join(dir, 'client.log')}"`,
    ].join('\n'),
  );
  const child = spawn(process.execPath, [distBin('push-jobs-client'), '-c', rb], {
    env: childEnv(),
    stdio: 'ignore',
  });
  t.teardown(() => void child.kill('SIGKILL'));
  const wanted = `cannot resolve the host of tcp://${NOWHERE}:${server.ports.heartbeat}`;
  const log = await until(
    'the client to log that it cannot resolve the host',
    async () => {
      const text = await readFile(join(dir, 'client.log'), 'utf8').catch(() => '');
      return text.includes(wanted) ? text : undefined;
    },
    20_000,
    100,
  );
  t.match(log, wanted);
  t.match(log, `cannot resolve the host of tcp://${NOWHERE}:${server.ports.command}`);
  t.equal(child.exitCode, null, 'still running, as libzmq keeps trying');
});

t.test(
  'a name that resolves to where nothing listens: the tester says what to check when --timeout passes',
  async (t) => {
    // The server listens on 127.0.0.1 only; 127.0.0.2 is loopback too, and refuses.
    const elsewhere = await startServerProcess(t, {
      settings: { server_name: '127.0.0.2', queue_listen_address: 'tcp://127.0.0.1' },
    });
    const run = await runBin(
      'infra-loadtest',
      ['--server', elsewhere.url, '--key', join(elsewhere.dataDir, 'admin.pem'), '--nodes', '2', '--timeout', '5'],
      { timeoutMs: 60_000 },
    );
    t.equal(run.code, 1);
    t.match(run.stderr, '--timeout passed');
    t.match(run.stderr, /server_name.*server_heartbeat_port, command_port.*reachable from here/);
  },
);
