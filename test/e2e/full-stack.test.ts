// The whole product as child processes (spec 1, 2.6, 3.3, 4.4, 4.5): infra-server, three real
// push-jobs-client nodes registered through the validator key, and the cli with the config.rb the server
// wrote at first start. The subtests share one server and its nodes, and run in order.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { cliWaitForJob, cliWith, jobIdOf, show } from '../support/cli-run.js';
import { pidFrom, processGone, startNodeFleet, waitForNodes, type FleetNode } from '../support/node-fleet.js';
import { startServerProcess } from '../support/server-process.js';
import { until } from '../support/deadline.js';

// Real clients, the cli and the server through every push-jobs path: about two minutes alone.
t.setTimeout(300_000);

const server = await startServerProcess(t, {
  settings: {
    server_name: '127.0.0.1',
    queue_listen_address: 'tcp://127.0.0.1',
    heartbeat_interval: 200,
    offline_threshold: 3,
    online_threshold: 2,
    voting_timeout: 5,
  },
});
const admin = await server.client('admin');
const scratch = await mkdtemp(join(tmpdir(), 'infra-full-'));
t.teardown(() => rm(scratch, { recursive: true, force: true }));
const pids = join(scratch, 'pids');
const home = join(scratch, 'home');
await Promise.all([mkdir(pids), mkdir(home)]);

const WHITELIST = {
  ok: 'echo "ok from $PUSH_NODE_NAME"',
  fail: 'echo "about to fail" >&2; exit 3',
  tree: `sleep 300 & echo $! > "${pids}/$PUSH_JOB_ID-$PUSH_NODE_NAME.pid"; wait`,
  big: 'yes x | head -c 100000',
};
const nodes = await startNodeFleet(t, {
  serverUrl: server.url,
  validationKey: join(server.dataDir, 'default-validator.pem'),
  dir: join(scratch, 'nodes'),
  names: ['node1', 'node2', 'node3'],
  whitelist: () => WHITELIST,
});
const [node1, node2, node3] = nodes as [FleetNode, FleetNode, FleetNode];
const ALL = ['node1', 'node2', 'node3'];

const cli = cliWith(join(server.dataDir, 'config.rb'), scratch, home);
const FAST = ['--poll-interval', '0.1'];
/** A node the last job aborted or left unused may still be in rehab (reference 4.2): start jobs once all are available. */
const ready = (...which: FleetNode[]) => waitForNodes(admin, which.length > 0 ? which : nodes, 'available');

/** Every process whose pid the `tree` command of job `id` wrote on the named nodes. */
async function treePids(id: string, names: readonly string[]): Promise<number[]> {
  return Promise.all(names.map((name) => pidFrom(join(pids, `${id}-${name}.pid`))));
}

function allGone(list: readonly number[]): Promise<true> {
  return until(
    'the background sleeps to end',
    async () => ((await Promise.all(list.map(processGone))).every(Boolean) ? true : undefined),
    10_000,
  );
}

t.test('three clients register through the validator and come up', async (t) => {
  await ready();
  for (const node of nodes)
    t.match(await node.log(), /INFO registered client node\d/, `${node.name} registered itself`);
  const r = await cli(['node', 'status']);
  t.equal(r.code, 0, show(r));
  t.match(r.stdout, /^node1 +up +available .*\nnode2 +up +available .*\nnode3 +up +available /m);
});

let okJob = '';
t.test('a job succeeds on three nodes: exit 0 and a report saying complete', async (t) => {
  const r = await cli(['job', 'start', 'ok', ...ALL, '--capture', ...FAST]);
  t.equal(r.code, 0, show(r));
  t.equal(r.stderr, '');
  okJob = jobIdOf(r);
  t.match(okJob, /^[0-9a-f]{32}$/);
  t.match(r.stdout, /^Command: +ok$/m);
  t.match(r.stdout, /^Status: +complete$/m);
  t.match(r.stdout, /^node1 +succeeded .*\nnode2 +succeeded .*\nnode3 +succeeded /m);
});

t.test('captured output is read back per node', async (t) => {
  const [out2, err2] = await Promise.all([
    cli(['job', 'output', okJob, 'node2']),
    cli(['job', 'output', okJob, 'node2', '--channel', 'stderr']),
  ]);
  t.equal(out2.code, 0, show(out2));
  t.equal(out2.stdout, 'ok from node2\n');
  t.equal(out2.stderr, '', 'not truncated');
  t.equal(err2.stdout, '');
});

t.test('a failing command exits 1 with a one-line reason', async (t) => {
  await ready();
  const r = await cli(['job', 'start', 'fail', ...ALL, ...FAST]);
  t.equal(r.code, 1, show(r));
  t.equal(r.stderr, 'ERROR: Job complete: 3 of 3 nodes failed\n');
  t.match(r.stdout, /^node1 +failed .*\nnode2 +failed .*\nnode3 +failed /m);
});

t.test('a command outside the whitelist is nacked and the job ends quorum_failed', async (t) => {
  await ready();
  const r = await cli(['job', 'start', 'rm-everything', ...ALL, ...FAST]);
  t.equal(r.code, 1, show(r));
  t.equal(r.stderr, 'ERROR: Job quorum_failed: 3 of 3 nodes nacked\n');
  t.match(r.stdout, /^Status: +quorum_failed$/m);
  t.match(r.stdout, /^node1 +nacked .*\nnode2 +nacked .*\nnode3 +nacked /m);
  t.match(await node1.log(), /refused 'rm-everything' \(not_whitelisted\)/);
});

t.test('a whitelist change through the cli applies without restarting the client', async (t) => {
  await ready(node1);
  const pid = node1.pid();
  const before = await cli(['job', 'start', 'later', 'node1', ...FAST]);
  t.equal(before.code, 1, show(before));
  t.match(before.stdout, /^node1 +nacked /m, 'not whitelisted yet');
  const set = await cli(['node', 'whitelist', 'set', 'node1', 'later', 'echo "added later"']);
  t.equal(set.code, 0, show(set));
  await ready(node1);
  const after = await cli(['job', 'start', 'later', 'node1', '--capture', ...FAST]);
  t.equal(after.code, 0, show(after));
  t.match(after.stdout, /^node1 +succeeded /m);
  t.equal((await cli(['job', 'output', jobIdOf(after), 'node1'])).stdout, 'added later\n');
  t.equal(node1.pid(), pid, 'the same client process ran it');
});

t.test("--timeout stops the job and kills each node's whole process tree", async (t) => {
  await ready();
  const r = await cli(['job', 'start', 'tree', ...ALL, '--timeout', '2', ...FAST]);
  t.equal(r.code, 1, show(r));
  t.match(r.stdout, /^Status: +timed_out$/m);
  t.match(r.stdout, /^On_timeout: +2 seconds$/m);
  const sleeps = await treePids(jobIdOf(r), ALL);
  t.ok(await allGone(sleeps), 'no background sleep is left');
});

t.test('job abort stops a running job and its process trees', async (t) => {
  await ready();
  const started = await cli(['job', 'start', 'tree', ...ALL, '--nowait']);
  t.equal(started.code, 0, show(started));
  const id = jobIdOf(started);
  const sleeps = await treePids(id, ALL);
  t.same(await Promise.all(sleeps.map(processGone)), [false, false, false], 'the background sleeps run');
  await cliWaitForJob(cli, id, 'running');
  const aborted = await cli(['job', 'abort', id]);
  t.equal(aborted.code, 0, show(aborted));
  t.match(aborted.stdout, `Abort sent.  Job ID: ${id}`);
  t.equal((await cliWaitForJob(cli, id)).status, 'aborted');
  t.ok(await allGone(sleeps), 'no background sleep is left');
});

t.test('output beyond 64 KiB is cut, and job output says so', async (t) => {
  await ready(node2);
  const r = await cli(['job', 'start', 'big', 'node2', '--capture', ...FAST]);
  t.equal(r.code, 0, show(r));
  const out = await cli(['job', 'output', jobIdOf(r), 'node2']);
  t.equal(out.code, 0, `exit ${out.code}\nstderr: ${out.stderr}`);
  t.ok(out.stdout.length > 30_000 && out.stdout.length < 65_536, `stdout cut to ${out.stdout.length} of 100000 bytes`);
  t.match(out.stdout, /^(x\n)+x?$/);
  t.match(out.stderr, /truncated/);
});

t.test('quorum as a count and as a percentage with one node down', async (t) => {
  await ready();
  t.equal(await node3.stop(), 0, 'node3 stops cleanly');
  await until(
    'cli node status to show node3 down',
    async () => {
      const r = await cli(['node', 'status', 'node3', '-F', 'json']);
      return (JSON.parse(r.stdout) as Array<{ status: string }>)[0]?.status === 'down' ? true : undefined;
    },
    10_000,
  );
  for (const quorum of ['2', '66%']) {
    await ready(node1, node2);
    const r = await cli(['job', 'start', 'ok', ...ALL, '-q', quorum, ...FAST]);
    t.equal(r.code, 1, `-q ${quorum}: not every node succeeded\n${show(r)}`);
    t.equal(r.stderr, 'ERROR: Job complete: 1 of 3 nodes unavailable\n', `-q ${quorum}`);
    t.match(r.stdout, /^unavailable: node3$/m);
    t.match(r.stdout, /^Status: +complete$/m);
    t.match(r.stdout, /^node1 +succeeded .*\nnode2 +succeeded .*\nnode3 +unavailable /m);
  }
  await ready(node1, node2);
  const all = await cli(['job', 'start', 'ok', ...ALL, '-q', '100%', ...FAST]);
  t.equal(all.code, 1, show(all));
  t.match(all.stdout, /^Status: +quorum_failed$/m);
  t.match(all.stdout, /^was_ready: +node1, node2$/m);
  t.match(all.stderr, /^ERROR: Job quorum_failed: 1 of 3 nodes unavailable\n$/);
  node3.start();
  await ready(node3);
});
