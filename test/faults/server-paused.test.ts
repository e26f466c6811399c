// SIGSTOP of the server, longer than the offline window and the most a backlog of heartbeats may stretch it: the
// nodes' heartbeats and results wait in the sockets meanwhile. Once it continues, the server counts the time it stood
// still as its own, not the nodes' silence, and reads what waited. With a few hundred nodes that takes several reads,
// between which the server's sweeps run: before, those sweeps marked every node not yet read down (and a job's
// commands running on them `crashed`), as a gateway woken from a pause did to 408 of 1,000 nodes in a chaos run.
import t from 'tap';
import { LAG_ALLOWANCE_WINDOWS } from '../../actors/push/node-machine.js';
import { until } from '../support/deadline.js';
import { nodeStateListSchema } from '../../src/api/push-jobs.js';
import { serverStatusSchema } from '../../src/api/status-schema.js';
import { runBin } from '../support/process-run.js';
import { startServerProcess } from '../support/server-process.js';

const INTERVAL_MS = 200;
const OFFLINE_THRESHOLD = 5;
const WINDOW_MS = INTERVAL_MS * OFFLINE_THRESHOLD;
/** Past the offline window and the largest stretch a backlog is allowed. */
const PAUSE_MS = WINDOW_MS * (1 + LAG_ALLOWANCE_WINDOWS) + 3000;

t.test('a server paused past the offline window with 300 nodes heartbeating marks none of them down', async (t) => {
  const server = await startServerProcess(t, {
    settings: { heartbeat_interval: INTERVAL_MS, offline_threshold: OFFLINE_THRESHOLD },
  });
  const admin = await server.client('admin');
  const nodes = 300;
  // The pause comes while the tester waits for its nodes to be available; then 5 s of heartbeats.
  const args = ['--server', server.url, '--key', `${server.dataDir}/admin.pem`, '--nodes', String(nodes)];
  const tester = runBin('infra-loadtest', [...args, '--heartbeat-only', '--seconds', '5', '--json'], {
    timeoutMs: 120_000,
  });
  const available = async (): Promise<number> => {
    const res = await admin.request('GET', '/organizations/default/pushy/node_states');
    return nodeStateListSchema.parse(res.body).filter((n) => n.availability === 'available').length;
  };
  const lag = async () => {
    const res = await fetch(new URL('/_status', server.url));
    return serverStatusSchema.parse(await res.json()).push_jobs?.lag ?? { downs: -1, downs_deferred: -1 };
  };
  await until(
    'every simulated node to be available',
    async () => ((await available()) === nodes ? true : undefined),
    60_000,
    200,
  );
  const before = await lag();
  process.kill(server.pid, 'SIGSTOP');
  await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  process.kill(server.pid, 'SIGCONT');

  const run = await tester;
  t.equal(run.code, 0, `the tester ends well: ${run.stderr}`);
  const after = await lag();
  t.equal(after.downs, before.downs, 'the server marked no node down after its pause');
  t.ok(
    after.downs_deferred - before.downs_deferred >= nodes / 2,
    `it deferred the downs of the nodes it had not read yet (${after.downs_deferred - before.downs_deferred})`,
  );
  t.equal(await available(), nodes, 'and every node is available at the end');
});
