// The job saver: a burst of steps is a handful of writes, each write holds exactly what its held-back effects
// show, those effects run in order once it is stored, and a failed write is tried again before anything shows.
// The saver runs on a manual clock: its spacing and retries are checked in the clock's time, never waited for.
import t from 'tap';
import { newJob, stepJob } from '../../actors/push/job-machine.js';
import type { JobState } from '../../actors/push/job-model.js';
import { JobSaver } from '../../actors/push/job-saver.js';
import type { JobSave } from '../../actors/push/job-store.js';
import { planRollout } from '../../actors/push/rollout-plan.js';
import { FencedError } from '../../src/store/fencing.js';
import { ManualClock } from '../support/manual-clock.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const names = (n: number) => Array.from({ length: n }, (_, i) => `n${i}`);

function fixture(
  nodes: string[],
  write: (save: JobSave) => Promise<void> = async () => {},
  rollout?: Parameters<typeof newJob>[0]['rollout'],
) {
  const job: JobState = newJob({
    id: 'j1',
    command: 'c',
    nodes,
    run_timeout: 60,
    voting_timeout: 60,
    quorum: rollout ? 1 : nodes.length,
    at: T0,
    ...(rollout ? { rollout } : {}),
  });
  const writes: JobSave[] = [];
  /** When each write began, on the clock. */
  const began: number[] = [];
  const failures: unknown[] = [];
  const clock = new ManualClock();
  const saver = new JobSaver(() => job, {
    write: async (save) => {
      began.push(clock.now());
      await write(save);
      writes.push(save);
    },
    failed: (e) => failures.push(e),
    retryMs: 1,
    timers: clock,
  });
  /** Steps an event and records its changes, as the job actor does. */
  const step = (event: Parameters<typeof stepJob>[1]) => {
    for (const e of stepJob(job, event).effects) if (e.type === 'persist') saver.changed(e.job, e.nodes);
  };
  /** Lets the saver run (its timers too) until every change recorded so far is stored. */
  const settled = () => clock.until('every change to be stored', () => !saver.pending);
  return { job, saver, writes, began, failures, step, clock, settled };
}

t.test('a burst of 1,000 acks stepped in one turn is one write of those nodes', async (t) => {
  const { job, writes, step, settled } = fixture(names(1000));
  step({ type: 'start', at: T0, available: new Set(names(1000)) });
  await settled();
  writes.length = 0;
  for (const n of names(1000)) step({ type: 'ack_commit', at: T0 + 1, node: n });
  await settled();
  t.equal(writes.length, 1, 'one write');
  t.equal(writes[0]?.nodes.length, 1000, 'holding every node that moved');
  t.equal(writes[0]?.header?.status, 'running', 'and the header, since the job moved');
  t.equal(job.status, 'running');
});

t.test('acks arriving one a millisecond are written at most every 10 ms, and not all held to the end', async (t) => {
  const { writes, began, step, clock, settled } = fixture(names(300));
  step({ type: 'start', at: T0, available: new Set(names(300)) });
  await settled();
  writes.length = 0;
  began.length = 0;
  const from = clock.now();
  for (const n of names(300)) {
    step({ type: 'ack_commit', at: T0 + 1, node: n });
    await clock.advance(1);
  }
  await settled();
  const gaps = began.slice(1).map((at, i) => at - (began[i] as number));
  t.same(
    gaps.filter((g) => g < 10),
    [],
    'no write begins within 10 ms of the one before',
  );
  t.ok(writes.length <= 300 / 10 + 1, `${writes.length} writes for 300 acks over 300 ms`);
  t.ok(
    began.filter((at) => at < from + 300).length >= 300 / 10 - 1,
    'writes go on during the burst, one every 10 ms, not all at its end',
  );
  t.equal(new Set(writes.flatMap((w) => w.nodes.map(([n]) => n))).size, 300, 'every node that moved is written');
});

t.test('an answer waiting for a write leaves from memory once the store refuses it; effects still wait', async (t) => {
  let refuse = true;
  const { saver, step, failures, clock, settled } = fixture(names(1), async () => {
    if (refuse) throw new Error('store away');
  });
  step({ type: 'start', at: T0, available: new Set(names(1)) });
  const order: string[] = [];
  saver.afterSaved(() => order.push('effect'));
  saver.answerAfterSaved(() => order.push('answer'));
  t.same(order, [], 'both wait for the write');
  await clock.until('the store to refuse a write', () => failures.length > 0);
  t.same(order, ['answer'], 'the answer left when the write failed, the effect did not');
  t.ok(saver.failing, 'the saver knows the store refuses writes');
  saver.answerAfterSaved(() => order.push('answer while failing'));
  t.same(order, ['answer', 'answer while failing'], 'and answers leave at once while the store refuses writes');
  refuse = false;
  await settled();
  t.same(order, ['answer', 'answer while failing', 'effect'], 'the effect ran once the write landed');
});

t.test('effects wait for the write that holds their change, and run in order', async (t) => {
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const { saver, writes, began, step, clock, settled } = fixture(['a', 'b'], () => gate);
  const seen: string[] = [];
  saver.afterSaved(() => seen.push('nothing pending: at once'));
  step({ type: 'start', at: T0, available: new Set(['a', 'b']) });
  saver.afterSaved(() => seen.push('commit sent'));
  await clock.until('the first write to begin', () => began.length === 1);
  step({ type: 'ack_commit', at: T0 + 1, node: 'a' });
  saver.afterSaved(() => seen.push('answer about a'));
  t.same(seen, ['nothing pending: at once'], 'nothing else shows while the write waits');
  release();
  await settled();
  t.same(seen, ['nothing pending: at once', 'commit sent', 'answer about a']);
  t.equal(writes.length, 2, 'the change stepped during the first write goes in a second');
  t.same(writes[1]?.nodes, [['a', { status: 'ready', at: T0 + 1 }]]);
  t.equal(writes[1]?.header, null, 'a node move alone does not rewrite the header');
});

t.test('a write the store refuses is tried again, and nothing shows before it lands', async (t) => {
  let fail = 2;
  const { saver, writes, failures, step, settled } = fixture(['a'], async () => {
    if (fail-- > 0) throw new Error('store down');
  });
  const seen: string[] = [];
  step({ type: 'start', at: T0, available: new Set(['a']) });
  saver.afterSaved(() => seen.push('commit sent'));
  await settled();
  t.equal(failures.length, 2, 'two failures reported');
  t.equal(writes.length, 1, 'then stored');
  t.same(seen, ['commit sent']);
});

t.test('the job as stored follows the writes as they land, never the steps still waiting', async (t) => {
  let release: (() => void) | undefined;
  let hold = false;
  const { job, saver, step, clock, settled } = fixture(names(3), () =>
    hold ? new Promise<void>((r) => (release = r)) : Promise.resolve(),
  );
  const writing = () => clock.until('the held write to be under way', () => release !== undefined);
  step({ type: 'start', at: T0, available: new Set(names(3)) });
  await settled();
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
  await settled();
  t.equal(saver.stored.status, 'running', 'once the write lands, the stored job runs');
  t.same(Object.values(saver.stored.nodes), ['ready', 'ready', 'ready']);
  t.equal(saver.stored.node_updated_at.n0, T0 + 5);
  t.ok(saver.version > before, 'and its version moved');
  hold = false;
  step({ type: 'ack_run', at: T0 + 8, node: 'n1' });
  step({ type: 'succeeded', at: T0 + 9, node: 'n1', exit_status: 0 });
  await settled();
  t.equal(saver.stored.exit_status.n1, 0, 'exit statuses are stored with their node');
  t.not(saver.stored.nodes, job.nodes, 'the stored job is a copy, not the live maps');
});

t.test('a rollout as stored is the one its write held: a wave that ends meanwhile shows once stored', async (t) => {
  let release: (() => void) | undefined;
  let hold = false;
  const plan = planRollout({ waves: [1], pause: 60 }, 2, () => 1);
  const { job, saver, step, clock, settled } = fixture(
    names(2),
    () => (hold ? new Promise<void>((r) => (release = r)) : Promise.resolve()),
    plan,
  );
  step({ type: 'start', at: T0, available: new Set(names(2)) });
  step({ type: 'ack_commit', at: T0 + 1, node: 'n0' });
  step({ type: 'ack_run', at: T0 + 2, node: 'n0' });
  await settled();
  hold = true;
  step({ type: 'succeeded', at: T0 + 3, node: 'n0', exit_status: 0 });
  await clock.until('the held write to be under way', () => release !== undefined);
  t.equal(job.rollout?.next_wave_at, T0 + 3 + 60_000, 'in memory the first wave ended and the pause began');
  t.equal(saver.stored.nodes.n0, 'running', 'as stored the node still runs');
  t.equal(saver.stored.rollout?.next_wave_at, null, 'and no pause has begun');
  t.equal(saver.stored.rollout?.waves[0]?.status, 'running', 'nor has its wave ended');
  release?.();
  await settled();
  t.equal(saver.stored.nodes.n0, 'succeeded', 'once the write lands, the node succeeded');
  t.equal(saver.stored.rollout?.next_wave_at, T0 + 3 + 60_000, 'and the pause shows with it');
});

t.test('a save refused for want of the lease is tried again, and counts as stored only once it lands', async (t) => {
  let leaseHeld = false;
  const { saver, step, clock, writes } = fixture(names(2), async () => {
    if (!leaseHeld) throw new FencedError(7);
  });
  step({ type: 'start', at: T0, available: new Set(names(2)) });
  let stored = false;
  const durable = saver.durable().then(() => (stored = true));
  const saved = t.resolves(saver.saved(), 'what waits for the saves to end is told at once: it may not wait');
  await clock.until('the write to be refused', () => saver.failing);
  await saved;
  t.equal(stored, false, 'nothing counts as stored meanwhile');
  // Redis was away past the lease, or lost its data: the lease comes back, and the write is tried again.
  leaseHeld = true;
  await clock.until('the write to land', () => !saver.pending);
  await durable;
  t.equal(writes.length, 1, 'the write landed');
  t.equal(stored, true, 'and now counts as stored');
});

t.test('a saver stopped while the store refuses its write gives it up, and says so', async (t) => {
  const { saver, step, clock } = fixture(names(2), () => Promise.reject(new FencedError(7)));
  step({ type: 'start', at: T0, available: new Set(names(2)) });
  const durable = t.rejects(saver.durable(), FencedError, 'what waits for storage hears it will not be stored');
  await clock.until('the write to be refused', () => saver.failing);
  // Another process took the partition, and the organization is let go: its jobs' actors stop.
  saver.stop();
  await durable;
  await t.resolves(saver.saved(), 'what waits for the saves to end goes on');
  await t.rejects(saver.durable(), FencedError, 'and so does whatever asks afterwards');
  t.equal(saver.pending, false, 'nothing is left to write');
});
