// The outcome a job must have, from its nodes' behaviours and its quorum (spec 3.1, reference 5.4, 5.5).
import t from 'tap';
import type { NodeBehaviour, Vote } from '../../src/loadtest/behaviour.js';
import { expectOutcome, quorumCount, type ExpectOptions, type JobNode } from '../../src/loadtest/expected.js';

const node = (vote: Vote, extra: Partial<NodeBehaviour> = {}, uncertain = false): JobNode => ({
  behaviour: { vote, run: 'succeed', flap: false, ...extra },
  uncertain,
});
const many = (n: number, make: () => JobNode) => Array.from({ length: n }, make);
const timing: ExpectOptions = {
  slowVoteMs: 0,
  votingTimeoutMs: 10_000,
  runMs: 0,
  runTimeoutMs: 60_000,
  aborted: false,
};

t.test('quorum counts: a percentage rounds up', async (t) => {
  t.equal(quorumCount({ kind: 'percent', value: 100 }, 50), 50);
  t.equal(quorumCount({ kind: 'percent', value: 85 }, 50), 43);
  t.equal(quorumCount({ kind: 'percent', value: 1 }, 50), 1);
  t.equal(quorumCount({ kind: 'percent', value: 0 }, 50), 0);
  t.equal(quorumCount({ kind: 'count', value: 7 }, 50), 7);
});

t.test('every node acks: complete', async (t) => {
  const e = expectOutcome(
    many(10, () => node('ack')),
    10,
    timing,
  );
  t.same(e.statuses, ['complete']);
  t.equal(e.readyMin, 10);
  t.equal(e.readyMax, 10);
});

t.test('nacking and silent nodes below the quorum: quorum_failed', async (t) => {
  const nodes = [...many(8, () => node('ack')), node('nack'), node('silent')];
  t.same(expectOutcome(nodes, 9, timing).statuses, ['quorum_failed']);
  t.same(expectOutcome(nodes, 8, timing).statuses, ['complete']);
});

t.test('failing and crashing nodes still let the job complete', async (t) => {
  const nodes = [node('ack', { run: 'fail' }), node('ack', { run: 'crash' }), node('ack')];
  t.same(expectOutcome(nodes, 3, timing).statuses, ['complete']);
});

t.test('nodes of unknown availability: either outcome when the quorum is within reach of them', async (t) => {
  const nodes = [...many(8, () => node('ack')), node('ack', { flap: true }, true), node('ack', {}, true)];
  const e = expectOutcome(nodes, 9, timing);
  t.same(e.statuses.sort(), ['complete', 'quorum_failed']);
  t.same([e.readyMin, e.readyMax], [8, 10]);
  t.same(expectOutcome(nodes, 8, timing).statuses, ['complete'], 'the certain nodes alone make the quorum');
});

t.test('votes after the voting timeout count as none, near it as either', async (t) => {
  const nodes = many(5, () => node('ack'));
  t.same(expectOutcome(nodes, 5, { ...timing, slowVoteMs: 20_000 }).statuses, ['quorum_failed']);
  t.same(expectOutcome(nodes, 5, { ...timing, slowVoteMs: 2000 }).statuses, ['complete']);
  t.same(expectOutcome(nodes, 5, { ...timing, slowVoteMs: 10_000 }).statuses.sort(), ['complete', 'quorum_failed']);
  t.same(expectOutcome(nodes, 0, { ...timing, slowVoteMs: 20_000 }).statuses, ['complete'], 'quorum 0, nobody ready');
});

t.test('commands longer than the run timeout: timed_out', async (t) => {
  const nodes = many(3, () => node('ack'));
  t.same(expectOutcome(nodes, 3, { ...timing, runMs: 90_000 }).statuses, ['timed_out']);
  t.same(expectOutcome(nodes, 3, { ...timing, runMs: 60_000 }).statuses.sort(), ['complete', 'timed_out']);
});

t.test('an accepted abort: aborted, whatever the nodes do', async (t) => {
  t.same(
    expectOutcome(
      many(3, () => node('ack')),
      3,
      { ...timing, aborted: true },
    ).statuses,
    ['aborted'],
  );
});
