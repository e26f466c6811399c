// kill -9 of a push-jobs-client while its command runs, with real client processes: the command dies with the
// client where the kernel can arrange it, and whatever a longer script started is stopped by the next client
// on the same file_dir before it takes a job.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { until } from '../support/deadline.js';
import { pidFrom, processGone, startNodeFleet, waitForNodes, type FleetNode } from '../support/node-fleet.js';
import { startJob, waitForEnd, waitForJob } from '../support/push-api.js';
import { startTestServer } from '../support/server.js';

const s = await startTestServer(t, 'file', { heartbeat_interval: 200 });
const dir = await mkdtemp(join(tmpdir(), 'killed-client-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const validationKey = join(s.dataDir, 'default-validator.pem');

const WHITELIST = {
  // `exec`: the shell becomes the sleep, which the kernel kills with the client.
  single: 'echo $$ > "$PID_FILE"; exec sleep 31',
  // A script with a child of its own: only the shell dies with the client; the child is a leftover.
  tree: 'sleep 32 & echo $! > "$PID_FILE"; wait',
  hello: 'echo hello',
};

const [node] = await startNodeFleet(t, {
  serverUrl: s.url,
  validationKey,
  dir,
  names: ['k1'],
  whitelist: () => WHITELIST,
});
const k1 = node as FleetNode;

/** Kills the client with SIGKILL and waits until it is gone. */
async function kill9(n: FleetNode): Promise<void> {
  const pid = n.pid();
  process.kill(pid, 'SIGKILL');
  await until('the client to die', async () => ((await processGone(pid)) ? true : undefined), 5000);
}

t.test('the command of a client killed with -9 dies with it', async (t) => {
  await waitForNodes(s.admin, [k1], 'available');
  const pidFile = join(dir, 'single.pid');
  const id = await startJob(s.admin, { command: 'single', nodes: ['k1'], env: { PID_FILE: pidFile } });
  await waitForJob(s.admin, id, 'running');
  const pid = await pidFrom(pidFile);
  await kill9(k1);
  await until('the command to end', async () => ((await processGone(pid)) ? true : undefined), 5000);
  t.ok(await processGone(pid), 'sleep 31 is not running');
  const job = await waitForEnd(s.admin, id);
  t.same(job.nodes.crashed, ['k1'], 'the job says the node crashed');
  k1.start();
  await waitForNodes(s.admin, [k1], 'available');
});

t.test('a restarted client stops what its killed predecessor left running, then takes jobs', async (t) => {
  const pidFile = join(dir, 'tree.pid');
  const id = await startJob(s.admin, { command: 'tree', nodes: ['k1'], env: { PID_FILE: pidFile } });
  await waitForJob(s.admin, id, 'running');
  const leftover = await pidFrom(pidFile);
  // The client acks the run as soon as the command is spawned and records its group a moment later (written
  // aside, then renamed to PGID.json).
  const recorded = async () =>
    (await readdir(join(k1.dir, 'files', 'running')).catch(() => [])).filter((n) => n.endsWith('.json'));
  await until('the command to be recorded', async () => ((await recorded()).length > 0 ? true : undefined), 5000);
  t.equal((await recorded()).length, 1, 'the running command is recorded under file_dir');
  await kill9(k1);
  await waitForEnd(s.admin, id);

  k1.start();
  await until('the leftover to be stopped', async () => ((await processGone(leftover)) ? true : undefined), 10_000);
  t.match(await k1.log(), /its command \(process group \d+\) outlived a previous client; stopping it/);
  await until('the record to go', async () => ((await recorded()).length === 0 ? true : undefined), 5000);
  await waitForNodes(s.admin, [k1], 'available');
  const next = await waitForEnd(s.admin, await startJob(s.admin, { command: 'hello', nodes: ['k1'] }));
  t.same(next.nodes.succeeded, ['k1'], 'the next job runs');
  t.same(await recorded(), [], 'a finished command leaves no record');
});
