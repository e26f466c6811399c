// The job saver: a burst of steps is a handful of writes, each write holds exactly what its held-back effects
// show, those effects run in order once it is stored, and a failed write is tried again before anything shows.
import t from 'tap';
import { newJob, stepJob } from '../../actors/push/job-machine.js';
import type { JobState } from '../../actors/push/job-model.js';
import { JobSaver } from '../../actors/push/job-saver.js';
import type { JobSave } from '../../actors/push/job-store.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const names = (n: number) => Array.from({ length: n }, (_, i) => `n${i}`);

function fixture(nodes: string[], write: (save: JobSave) => Promise<void> = async () => {}) {
  const job: JobState = newJob({
    id: 'j1',
    command: 'c',
    nodes,
    run_timeout: 60,
    voting_timeout: 60,
    quorum: nodes.length,
    at: T0,
  });
  const writes: JobSave[] = [];
  const failures: unknown[] = [];
  const saver = new JobSaver(() => job, {
    write: async (save) => {
      await write(save);
      writes.push(save);
    },
    failed: (e) => failures.push(e),
    retryMs: 1,
  });
  /** Steps an event and records its changes, as the job actor does. */
  const step = (event: Parameters<typeof stepJob>[1]) => {
    for (const e of stepJob(job, event).effects) if (e.type === 'persist') saver.changed(e.job, e.nodes);
  };
  return { job, saver, writes, failures, step };
}

const settled = (saver: JobSaver) =>
  new Promise<void>((resolve) => {
    const check = () => (saver.pending ? setImmediate(check) : resolve());
    check();
  });

t.test('a burst of 1,000 acks stepped in one turn is one write of those nodes', async (t) => {
  const { job, saver, writes, step } = fixture(names(1000));
  step({ type: 'start', at: T0, available: new Set(names(1000)) });
  await settled(saver);
  writes.length = 0;
  for (const n of names(1000)) step({ type: 'ack_commit', at: T0 + 1, node: n });
  await settled(saver);
  t.equal(writes.length, 1, 'one write');
  t.equal(writes[0]?.nodes.length, 1000, 'holding every node that moved');
  t.equal(writes[0]?.header?.status, 'running', 'and the header, since the job moved');
  t.equal(job.status, 'running');
});

t.test('acks arriving one per turn of the event loop are written at most every 10 ms', async (t) => {
  const { saver, writes, step } = fixture(names(300));
  step({ type: 'start', at: T0, available: new Set(names(300)) });
  await settled(saver);
  writes.length = 0;
  const began = performance.now();
  for (const n of names(300)) {
    step({ type: 'ack_commit', at: T0 + 1, node: n });
    await new Promise((r) => setImmediate(r));
  }
  await settled(saver);
  const elapsed = performance.now() - began;
  t.ok(writes.length <= Math.ceil(elapsed / 10) + 1, `${writes.length} writes in ${Math.round(elapsed)} ms`);
  t.equal(new Set(writes.flatMap((w) => w.nodes.map(([n]) => n))).size, 300, 'every node that moved is written');
});

t.test('an answer waiting for a write leaves from memory once the store refuses it; effects still wait', async (t) => {
  let refuse = true;
  const { saver, step } = fixture(names(1), async () => {
    if (refuse) throw new Error('store away');
  });
  step({ type: 'start', at: T0, available: new Set(names(1)) });
  const order: string[] = [];
  saver.afterSaved(() => order.push('effect'));
  saver.answerAfterSaved(() => order.push('answer'));
  await new Promise((r) => setTimeout(r, 20));
  t.same(order, ['answer'], 'the answer left when the write failed, the effect did not');
  saver.answerAfterSaved(() => order.push('answer while failing'));
  t.same(order, ['answer', 'answer while failing'], 'and answers leave at once while the store refuses writes');
  refuse = false;
  await settled(saver);
  t.same(order, ['answer', 'answer while failing', 'effect'], 'the effect ran once the write landed');
});

t.test('effects wait for the write that holds their change, and run in order', async (t) => {
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const { saver, writes, step } = fixture(['a', 'b'], () => gate);
  const seen: string[] = [];
  saver.afterSaved(() => seen.push('nothing pending: at once'));
  step({ type: 'start', at: T0, available: new Set(['a', 'b']) });
  saver.afterSaved(() => seen.push('commit sent'));
  await new Promise((r) => setImmediate(r));
  step({ type: 'ack_commit', at: T0 + 1, node: 'a' });
  saver.afterSaved(() => seen.push('answer about a'));
  t.same(seen, ['nothing pending: at once'], 'nothing else shows while the write waits');
  release();
  await settled(saver);
  t.same(seen, ['nothing pending: at once', 'commit sent', 'answer about a']);
  t.equal(writes.length, 2, 'the change stepped during the first write goes in a second');
  t.same(writes[1]?.nodes, [['a', { status: 'ready', at: T0 + 1 }]]);
  t.equal(writes[1]?.header, null, 'a node move alone does not rewrite the header');
});

t.test('a write the store refuses is tried again, and nothing shows before it lands', async (t) => {
  let fail = 2;
  const { saver, writes, failures, step } = fixture(['a'], async () => {
    if (fail-- > 0) throw new Error('store down');
  });
  const seen: string[] = [];
  step({ type: 'start', at: T0, available: new Set(['a']) });
  saver.afterSaved(() => seen.push('commit sent'));
  await settled(saver);
  t.equal(failures.length, 2, 'two failures reported');
  t.equal(writes.length, 1, 'then stored');
  t.same(seen, ['commit sent']);
});

t.test('the job as stored follows the writes as they land, never the steps still waiting', async (t) => {
  let release: (() => void) | undefined;
  let hold = false;
  const { job, saver, step } = fixture(names(3), () =>
    hold ? new Promise<void>((r) => (release = r)) : Promise.resolve(),
  );
  const writing = () =>
    new Promise<void>((resolve) => {
      const check = () => (release ? resolve() : setTimeout(check, 1));
      check();
    });
  step({ type: 'start', at: T0, available: new Set(names(3)) });
  await settled(saver);
  t.equal(saver.stored.status, 'voting', 'the start is stored');
  const before = saver.version;
  hold = true;
  for (const n of names(3)) step({ type: 'ack_commit', at: T0 + 5, node: n });
  await writing();
  t.equal(job.status, 'running', 'in memory the job runs');
  t.equal(saver.stored.status, 'voting', 'as stored it still votes while the write is under way');
  t.same(Object.values(saver.stored.nodes), ['new', 'new', 'new']);
  t.equal(saver.version, before, 'no write landed');
  release?.();
  await settled(saver);
  t.equal(saver.stored.status, 'running', 'once the write lands, the stored job runs');
  t.same(Object.values(saver.stored.nodes), ['ready', 'ready', 'ready']);
  t.equal(saver.stored.node_updated_at.n0, T0 + 5);
  t.ok(saver.version > before, 'and its version moved');
  hold = false;
  step({ type: 'ack_run', at: T0 + 8, node: 'n1' });
  step({ type: 'succeeded', at: T0 + 9, node: 'n1', exit_status: 0 });
  await settled(saver);
  t.equal(saver.stored.exit_status.n1, 0, 'exit statuses are stored with their node');
  t.not(saver.stored.nodes, job.nodes, 'the stored job is a copy, not the live maps');
});
