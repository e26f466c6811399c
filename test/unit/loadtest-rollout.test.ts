// The tester's own model of a rollout: the waves' sizes as the server plans them, each node's wave, and the outcome
// a job in waves must have, each wave making its own quorum and failures held against --max-failures.
import t from 'tap';
import type { NodeBehaviour, Vote } from '../../src/loadtest/behaviour.js';
import type { ExpectOptions, JobNode } from '../../src/loadtest/expected.js';
import { expectRollout } from '../../src/loadtest/rollout-expected.js';
import { nodeWaves, waveSizes } from '../../src/loadtest/rollout.js';

const node = (vote: Vote, run: NodeBehaviour['run'] = 'succeed', uncertain = false): JobNode => ({
  behaviour: { vote, run, flap: false },
  uncertain,
});
const acks = (n: number) => Array.from({ length: n }, () => node('ack'));
const timing: ExpectOptions = {
  slowVoteMs: 0,
  votingTimeoutMs: 10_000,
  runMs: 0,
  runTimeoutMs: 60_000,
  aborted: false,
};
const all = (size: number) => size;

t.test('wave sizes: counts and percentages of every node rounded up, the last repeated', async (t) => {
  t.same(waveSizes(['10%'], 30), Array(10).fill(3));
  t.same(waveSizes([1, '10%', '100%'], 25), [1, 3, 21]);
  t.same(waveSizes([2], 5), [2, 2, 1], 'the last wave takes what is left');
  t.same(waveSizes(['0.1%'], 3), [1, 1, 1], 'never an empty wave');
  t.same(waveSizes([1, 1, 5], 2), [1, 1], 'fewer waves than listed: the server refuses the job');
});

t.test("each node's wave: its slot's nodes in order, none outside the slots", async (t) => {
  t.same(nodeWaves(7, 3, 2, [1, 2]), [1, 2, 2, 1, 2, 2, 0]);
  t.same(nodeWaves(3, 3, 1, []), [0, 0, 0], 'no rollout');
});

t.test('every node acks: complete after the last wave', async (t) => {
  const e = expectRollout(acks(10), { waves: ['30%'] }, all, timing);
  t.same(e.statuses, ['complete']);
  t.same([e.quorum, e.readyMin, e.readyMax], [3, 10, 10]);
});

t.test('a wave short of its quorum ends the job there', async (t) => {
  const nodes = [...acks(2), node('nack'), ...acks(3)];
  t.same(expectRollout(nodes, { waves: [3] }, all, timing).statuses, ['quorum_failed']);
  t.same(expectRollout(nodes, { waves: [3] }, (size) => size - 1, timing).statuses, ['complete']);
  const unsure = [...acks(3), node('ack', 'succeed', true), ...acks(2)];
  t.same(expectRollout(unsure, { waves: [3] }, all, timing).statuses.sort(), ['complete', 'quorum_failed']);
});

t.test('failures past --max-failures after a wave stop the rollout; after the last they do not', async (t) => {
  const nodes = [node('ack', 'fail'), node('ack', 'crash'), ...acks(4)];
  t.same(expectRollout(nodes, { waves: [2], max_failures: 1 }, all, timing).statuses, ['max_failures_exceeded']);
  t.same(expectRollout(nodes, { waves: [2], max_failures: 2 }, all, timing).statuses, ['complete']);
  const third = [...acks(2), node('ack', 'fail'), ...acks(3)];
  t.same(
    expectRollout(third, { waves: [2], max_failures: '25%' }, all, timing).statuses,
    ['complete'],
    '1 of the 4 that ran',
  );
  t.same(expectRollout(third, { waves: [2], max_failures: '20%' }, all, timing).statuses, ['max_failures_exceeded']);
  const last = [...acks(4), node('ack', 'fail'), node('ack', 'fail')];
  t.same(expectRollout(last, { waves: [2], max_failures: 0 }, all, timing).statuses, ['complete'], 'no wave is left');
  const unsure = [node('ack', 'fail', true), ...acks(3)];
  t.same(
    expectRollout(unsure, { waves: [2], max_failures: 0 }, (size) => size - 1, timing).statuses.sort(),
    ['complete', 'max_failures_exceeded'],
    'a failing node that may not be there',
  );
});

t.test('an accepted abort: aborted', async (t) => {
  t.same(expectRollout(acks(4), { waves: [1] }, all, { ...timing, aborted: true }).statuses, ['aborted']);
});
