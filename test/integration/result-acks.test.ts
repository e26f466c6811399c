// ack_result over real ZeroMQ: a node's result is acknowledged once its job has stored it, never before; the same
// result sent again, and one for a job the server does not run, are acknowledged too and change nothing.
import t from 'tap';
import { jobsCollection } from '../../src/store/collections.js';
import type { Store } from '../../src/store/store.js';
import { until } from '../support/deadline.js';
import { getJob, startJob, waitForJob } from '../support/push-api.js';
import { startTestServer } from '../support/server.js';
import { ack, startTestNode } from '../support/test-node.js';
import { quietLogger } from '../support/logs.js';

const FAST = { heartbeat_interval: 100, offline_threshold: 8, online_threshold: 2, voting_timeout: 5 };

/** Job writes held back while `held.on`; each held write is counted and waits for `release`. */
interface Hold {
  on: boolean;
  writes: number;
  release(): void;
}

function holdingJobWrites(store: Store, hold: Hold): Store {
  const jobs = jobsCollection('default');
  const waiting: Array<() => void> = [];
  hold.release = () => {
    hold.on = false;
    for (const go of waiting.splice(0)) go();
  };
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (property !== 'putFields') return value.bind(target);
      return async (...args: unknown[]) => {
        if (args[0] === jobs && hold.on) {
          hold.writes += 1;
          await new Promise<void>((resolve) => waiting.push(resolve));
        }
        return Reflect.apply(value, target, args);
      };
    },
  });
}

t.test('a result is acknowledged only once its job has stored it', async (t) => {
  const hold: Hold = { on: false, writes: 0, release: () => undefined };
  const s = await startTestServer(t, 'file', FAST, quietLogger(), {
    store: (store) => holdingJobWrites(store, hold),
  });
  const n = await startTestNode(s, 'held-1', { run: ack() });
  t.teardown(() => n.stop());
  const id = await startJob(s.admin, { command: 'chef-client', nodes: ['held-1'] });
  await n.waitForSent('ack_run', { where: (m) => m.job_id === id });
  await until(
    'the job to store the node running',
    async () => {
      const job = await getJob(s.admin, id);
      return job.nodes.running?.includes('held-1') ? true : undefined;
    },
    10_000,
  );

  hold.on = true;
  n.finish();
  await until('the job to try to store the result', async () => (hold.writes > 0 ? true : undefined), 10_000);
  // Two server heartbeats after that: an ack sent with the result still unstored would have come before them.
  const beats = n.received.length;
  await n.waitFor('heartbeat', { after: beats });
  await n.waitFor('heartbeat', { after: n.received.length });
  t.notOk(
    n.received.some((m) => m.type === 'ack_result'),
    'no ack_result while the store has not taken the result',
  );
  t.same((await getJob(s.admin, id)).nodes, { running: ['held-1'] }, 'the job as stored still runs the node');

  hold.release();
  const acked = await n.waitFor('ack_result', { where: (m) => m.job_id === id });
  t.equal(acked.job_id, id, 'the ack names the job once the store took the result');
  t.same((await waitForJob(s.admin, id, 'complete')).nodes, { succeeded: ['held-1'] });
  t.same(n.problems, [], 'the ack was signed and well formed');
});

t.test('a result sent again, or for a job the server does not run, is acknowledged and changes nothing', async (t) => {
  const s = await startTestServer(t, 'file', FAST);
  const n = await startTestNode(s, 'again-1');
  t.teardown(() => n.stop());
  const id = await startJob(s.admin, { command: 'chef-client', nodes: ['again-1'] });
  await n.waitFor('ack_result', { where: (m) => m.job_id === id });
  const done = await waitForJob(s.admin, id, 'complete');

  const before = n.received.length;
  n.send('command', { type: 'succeeded', job_id: id, exit_status: 0 });
  await n.waitFor('ack_result', { where: (m) => m.job_id === id, after: before });
  const unknown = 'f'.repeat(32);
  const mark = n.received.length;
  n.send('command', { type: 'failed', job_id: unknown, exit_status: 2 });
  await n.waitFor('ack_result', { where: (m) => m.job_id === unknown, after: mark });
  // What the server sends in answer to a message leaves in order on the command channel: a reset (a rehab abort)
  // or an abort of the job would have come before the ack.
  t.notOk(
    n.received.slice(before).some((m) => m.type === 'abort'),
    'neither result puts the node in rehab or aborts anything',
  );
  const again = await getJob(s.admin, id);
  t.same(again.nodes, { succeeded: ['again-1'] }, 'the job keeps the result it had');
  t.equal(again.updated_at, done.updated_at, 'and is not changed');
  const state = await s.admin.request('GET', '/organizations/default/pushy/node_states/again-1');
  t.match(state.body, { status: 'up', availability: 'available' }, 'the node stays available');
  const next = await startJob(s.admin, { command: 'chef-client', nodes: ['again-1'] });
  t.same((await waitForJob(s.admin, next, 'complete')).nodes, { succeeded: ['again-1'] }, 'and takes the next job');
});
