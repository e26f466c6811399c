// The server stopped under running clients (spec 3.3; reference 2.8): infra-server, three real push-jobs-client
// nodes and the cli as child processes. A job runs on while the server is away, the clients refuse work until
// its heartbeat is back, and come back up by themselves once it restarts on the same ports and data_dir.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { cliWaitForJob, cliWith, jobIdOf, show } from '../support/cli-run.js';
import { startNodeFleet, waitForNodes } from '../support/node-fleet.js';
import { startServerProcess } from '../support/server-process.js';
import { poll } from '../support/test-node.js';

let server = await startServerProcess(t, {
  settings: {
    server_name: '127.0.0.1', queue_listen_address: 'tcp://127.0.0.1',
    heartbeat_interval: 200, offline_threshold: 3, online_threshold: 2, voting_timeout: 5,
  },
});
const scratch = await mkdtemp(join(tmpdir(), 'infra-full-restart-'));
t.teardown(() => rm(scratch, { recursive: true, force: true }));
const markers = join(scratch, 'markers');
const home = join(scratch, 'home');
await Promise.all([mkdir(markers), mkdir(home)]);

const nodes = await startNodeFleet(t, {
  serverUrl: server.url, validationKey: join(server.dataDir, 'default-validator.pem'), dir: join(scratch, 'nodes'),
  names: ['node1', 'node2', 'node3'],
  whitelist: () => ({
    ok: 'true',
    // The marker is written only once the whole command has run.
    slow: `sleep 4; echo done > "${markers}/$PUSH_JOB_ID-$PUSH_NODE_NAME"`,
  }),
});
const ALL = nodes.map((n) => n.name);
const cli = cliWith(join(server.dataDir, 'config.rb'), scratch, home);
const FAST = ['--poll-interval', '0.1'];

const markerOf = (id: string, node: string) => readFile(join(markers, `${id}-${node}`), 'utf8').catch(() => undefined);

t.test('a job started before the server stops runs to its end on every node', async (t) => {
  await waitForNodes(await server.client('admin'), nodes, 'available');
  const started = await cli(['job', 'start', 'slow', ...ALL, '--nowait']);
  t.equal(started.code, 0, show(started));
  const id = jobIdOf(started);
  const running = await poll('every node to run the job', async () => {
    const job = await cliWaitForJob(cli, id, 'running');
    return job.nodes.running?.length === 3 ? job : undefined;
  }, 10_000);
  t.same(running.nodes.running, ALL);

  const ended = await server.stop();
  t.same(ended, { code: 0, signal: null }, 'the server stops cleanly on SIGTERM');
  t.same(await Promise.all(ALL.map((n) => markerOf(id, n))), [undefined, undefined, undefined], 'the command still runs');
  for (const node of nodes) {
    await poll(`${node.name} to notice the server is gone`, async () => (/WARN no heartbeat from the server for \d+ ms: finishing the current job, refusing new ones/.test(await node.log()) ? true : undefined), 10_000);
  }
  for (const node of ALL) t.equal(await poll(`the marker of ${node}`, () => markerOf(id, node), 10_000), 'done\n', `${node} finished the command while the server was away`);
  for (const node of nodes) t.ok(node.running(), `${node.name} keeps running`);

  server = await server.restart();
  const right = await cli(['job', 'start', 'ok', ...ALL, ...FAST]);
  t.comment(show(right));
  const back = await cliWaitForJob(cli, id);
  t.comment(JSON.stringify(back));
  for (const node of nodes) t.comment(await node.log());
});
