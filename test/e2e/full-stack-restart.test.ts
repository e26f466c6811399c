// The server stopped under running clients (spec 3.3; reference 2.8): infra-server, three real push-jobs-client
// nodes and the cli as child processes. A job runs on while the server is away, no job runs on a client that
// is not back yet, and the clients come back by themselves once it restarts on the same ports and data_dir.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { cliWaitForJob, cliWith, jobIdOf, show } from '../support/cli-run.js';
import { startNodeFleet, waitForNodes } from '../support/node-fleet.js';
import { startServerProcess } from '../support/server-process.js';
import { until } from '../support/deadline.js';

let server = await startServerProcess(t, {
  settings: {
    server_name: '127.0.0.1',
    queue_listen_address: 'tcp://127.0.0.1',
    heartbeat_interval: 200,
    offline_threshold: 3,
    online_threshold: 2,
    voting_timeout: 5,
  },
});
const scratch = await mkdtemp(join(tmpdir(), 'infra-full-restart-'));
t.teardown(() => rm(scratch, { recursive: true, force: true }));
const markers = join(scratch, 'markers');
const release = join(scratch, 'release');
const home = join(scratch, 'home');
await Promise.all([mkdir(markers), mkdir(home)]);

const nodes = await startNodeFleet(t, {
  serverUrl: server.url,
  validationKey: join(server.dataDir, 'default-validator.pem'),
  dir: join(scratch, 'nodes'),
  names: ['node1', 'node2', 'node3'],
  whitelist: () => ({
    ok: 'true',
    // Runs until the test creates the release file, then writes its marker as its last act.
    slow: `while [ ! -e "${release}" ]; do sleep 0.1; done; echo done > "${markers}/$PUSH_JOB_ID-$PUSH_NODE_NAME"`,
  }),
});
const ALL = nodes.map((n) => n.name);
const cli = cliWith(join(server.dataDir, 'config.rb'), scratch, home);
const FAST = ['--poll-interval', '0.1'];

const markerOf = (id: string, node: string) => readFile(join(markers, `${id}-${node}`), 'utf8').catch(() => undefined);

const offlineLine = /WARN no heartbeat from the server for \d+ ms: finishing the current job, refusing new ones/g;
/** Waits until every client has logged going offline `times` times in all. */
async function allNoticed(times: number): Promise<void> {
  for (const node of nodes) {
    await until(
      `${node.name} to notice the server is gone`,
      async () => (((await node.log()).match(offlineLine)?.length ?? 0) >= times ? true : undefined),
      10_000,
    );
  }
}

/** `cli node status` until it shows every node up: the clients come back without being restarted. */
async function allUpByCli(): Promise<void> {
  await until(
    'cli node status to show every node up',
    async () => {
      const r = await cli(['node', 'status', '-F', 'json']);
      const states = r.code === 0 ? (JSON.parse(r.stdout) as Array<{ node_name: string; status: string }>) : [];
      return ALL.every((name) => states.some((s) => s.node_name === name && s.status === 'up')) ? true : undefined;
    },
    20_000,
  );
}

/** For a failure: the job as the cli shows it, the restarted server's output and each client's log since it started. */
async function whatEachSaw(id: string): Promise<string> {
  const job = await cli(['job', 'status', id, '-F', 'json']);
  const logs = await Promise.all(nodes.map(async (n) => `--- ${n.name}\n${(await n.log()).slice(-6000)}`));
  return [`--- job ${id}\n${job.stdout}${job.stderr}`, `--- server\n${server.output().slice(-6000)}`, ...logs].join(
    '\n',
  );
}

async function jobCompletes(t: Test): Promise<void> {
  await waitForNodes(await server.client('admin'), nodes, 'available');
  const r = await cli(['job', 'start', 'ok', ...ALL, ...FAST]);
  t.equal(r.code, 0, show(r));
  t.match(r.stdout, /^node1 +succeeded .*\nnode2 +succeeded .*\nnode3 +succeeded /m);
}

t.test('a job running when the server stops runs to its end; the clients return by themselves', async (t) => {
  await waitForNodes(await server.client('admin'), nodes, 'available');
  const started = await cli(['job', 'start', 'slow', ...ALL, '--nowait']);
  t.equal(started.code, 0, show(started));
  const id = jobIdOf(started);
  await until(
    'every node to run the job',
    async () => ((await cliWaitForJob(cli, id, 'running')).nodes.running?.length === 3 ? true : undefined),
    10_000,
  );

  t.same(await server.stop(), { code: 0, signal: null }, 'the server stops cleanly on SIGTERM');
  await allNoticed(1);
  await writeFile(release, '');
  for (const node of ALL)
    t.equal(
      await until(`the marker of ${node}`, () => markerOf(id, node), 10_000),
      'done\n',
      `${node} finished the command while the server was away`,
    );
  for (const node of nodes) t.ok(node.running(), `${node.name} keeps running`);

  server = await server.restart();
  await allUpByCli();
  const resumed = await cliWaitForJob(cli, id).catch(async (e: unknown) => {
    throw new Error(`${String(e)}\n${await whatEachSaw(id)}`);
  });
  t.equal(resumed.status, 'complete', 'the restarted server resumed the job');
  t.same(resumed.nodes.succeeded, ALL, 'the results sent while the server was away arrive');
  await jobCompletes(t);
});

t.test('a job started before the clients are back does not run on them', async (t) => {
  await waitForNodes(await server.client('admin'), nodes, 'available');
  await server.stop();
  await allNoticed(2);
  // Frozen, the clients stay away from the restarted server for as long as this job needs to decide.
  for (const node of nodes) node.freeze();
  t.teardown(() => {
    for (const node of nodes) node.resume();
  });
  server = await server.restart();
  const r = await cli(['job', 'start', 'ok', ...ALL, ...FAST]);
  t.equal(r.code, 1, show(r));
  t.match(r.stdout, /^Status: +quorum_failed$/m);
  t.match(r.stdout, /^node1 +(nacked|unavailable) .*\nnode2 +(nacked|unavailable) .*\nnode3 +(nacked|unavailable) /m);
  for (const node of nodes) node.resume();
  await allUpByCli();
  await jobCompletes(t);
});
