// A second push-jobs-client started for a node whose client runs (same client.rb and key, another process):
// the running client keeps the node and its jobs, the second is told the node is in use, and it takes the node
// over once the first stops.
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { until } from '../support/deadline.js';
import { startNodeFleet, waitForNodes, type FleetNode } from '../support/node-fleet.js';
import { childEnv, distBin } from '../support/process-run.js';
import { startJob, waitForEnd } from '../support/push-api.js';
import { startTestServer } from '../support/server.js';

t.test('a second client neither locks out the first nor runs its jobs, and takes over when it stops', async (t) => {
  const s = await startTestServer(t, 'file', { heartbeat_interval: 200 });
  const dir = await mkdtemp(join(tmpdir(), 'second-client-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // The command's parent is the client that runs it.
  const whitelist = { whoami: 'echo "$PPID"' };
  const [node] = await startNodeFleet(t, {
    serverUrl: s.url,
    validationKey: join(s.dataDir, 'default-validator.pem'),
    dir,
    names: ['twin'],
    whitelist: () => whitelist,
  });
  const first = node as FleetNode;
  await waitForNodes(s.admin, [first], 'available');

  // The operator's mistake: the same folder copied, client.pem included, and a second client started on it.
  const twinDir = join(dir, 'twin-copy');
  await cp(first.dir, twinDir, { recursive: true });
  await rm(join(twinDir, 'client.log'), { force: true });
  const second = spawn(process.execPath, [distBin('push-jobs-client'), '-c', join(twinDir, 'client.rb')], {
    env: childEnv(),
    stdio: 'ignore',
  });
  t.teardown(() => second.kill('SIGKILL'));
  const secondLog = () => readFile(join(twinDir, 'client.log'), 'utf8').catch(() => '');
  await until(
    'the second client to be told the node is in use',
    async () => (/another push-jobs-client process holds node twin/.test(await secondLog()) ? true : undefined),
    10_000,
  );

  const output = async (id: string) =>
    (await s.admin.send('GET', `/organizations/default/pushy/jobs/${id}/output/twin/stdout`)).bytes.toString();
  const id = await startJob(s.admin, { command: 'whoami', nodes: ['twin'], capture_output: true });
  t.equal((await waitForEnd(s.admin, id)).status, 'complete', 'the running client keeps the node');
  t.equal(await output(id), `${first.pid()}\n`, 'and runs its jobs');

  await first.stop();
  await until(
    'the second client to take the node over',
    async () => {
      const next = await startJob(s.admin, { command: 'whoami', nodes: ['twin'], capture_output: true });
      const job = await waitForEnd(s.admin, next);
      return job.status === 'complete' ? next : undefined;
    },
    20_000,
    500,
  ).then(async (next) => t.equal(await output(next), `${second.pid}\n`, 'once the first stops, the second runs jobs'));
});
