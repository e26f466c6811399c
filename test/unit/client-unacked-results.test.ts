// Which results a node's client sends again: those the server has not acknowledged, on new channels at once, else
// after an offline window and then at a spacing that doubles, never more than a few, never one already queued.
import t from 'tap';
import {
  acknowledgeResult,
  holdResult,
  isResult,
  MAX_RESEND_MS,
  MAX_UNACKED,
  resultsToResend,
  type ResultAnswer,
  type UnackedResults,
} from '../../src/client/unacked-results.js';

const T0 = 1_000_000;
const WINDOW = 3000;
const result = (job: string, type: 'succeeded' | 'failed' = 'succeeded'): ResultAnswer => ({
  type,
  job_id: job,
  exit_status: type === 'succeeded' ? 0 : 1,
});
const jobs = (rs: UnackedResults): string[] => rs.map((r) => r.answer.job_id);

t.test('only succeeded and failed are results', async (t) => {
  t.ok(isResult(result('j1')));
  t.ok(isResult(result('j1', 'failed')));
  t.notOk(isResult({ type: 'aborted', job_id: 'j1' }));
  t.notOk(isResult({ type: 'ack_run', job_id: 'j1' }));
});

t.test('a result is kept until its ack, which lets only that job’s go', async (t) => {
  let results = holdResult([], result('j1'), T0).results;
  results = holdResult(results, result('j2', 'failed'), T0 + 10).results;
  t.strictSame(jobs(results), ['j1', 'j2']);
  t.strictSame(jobs(acknowledgeResult(results, 'j1')), ['j2']);
  t.equal(acknowledgeResult(results, 'j9'), results, 'an ack of a result not held changes nothing');
});

t.test('the same job reported again is held once, as last reported', async (t) => {
  let results = holdResult([], result('j1'), T0).results;
  results = holdResult(results, result('j1', 'failed'), T0 + 5).results;
  t.equal(results.length, 1);
  t.equal(results[0]?.answer.type, 'failed');
});

t.test('past the bound the oldest result is let go, and named', async (t) => {
  let results: UnackedResults = [];
  for (let i = 0; i < MAX_UNACKED; i++) {
    const held = holdResult(results, result(`j${i}`), T0 + i);
    t.equal(held.dropped, undefined);
    results = held.results;
  }
  const over = holdResult(results, result('newest'), T0 + 100);
  t.equal(over.dropped, 'j0');
  t.equal(over.results.length, MAX_UNACKED);
  t.equal(over.results.at(-1)?.answer.job_id, 'newest');
});

t.test('unacknowledged for an offline window, a result goes again, then after twice as long', async (t) => {
  let results = holdResult([], result('j1'), T0).results;
  let step = resultsToResend(results, T0 + WINDOW - 1, WINDOW);
  t.strictSame(step.due, [], 'not before the window has passed');
  t.equal(step.results, results, 'and nothing changes');
  step = resultsToResend(results, T0 + WINDOW, WINDOW);
  t.strictSame(jobs(step.results), ['j1']);
  t.strictSame(step.due, [result('j1')], 'sent again once the window passed');
  results = step.results;
  t.strictSame(resultsToResend(results, T0 + 3 * WINDOW - 1, WINDOW).due, [], 'the next waits twice as long');
  step = resultsToResend(results, T0 + 3 * WINDOW, WINDOW);
  t.equal(step.due.length, 1);
  results = step.results;
  t.strictSame(resultsToResend(results, T0 + 7 * WINDOW - 1, WINDOW).due, [], 'then four times');
  t.equal(resultsToResend(results, T0 + 7 * WINDOW, WINDOW).due.length, 1);
});

t.test('the spacing stops growing at its most', async (t) => {
  let results: UnackedResults = [{ answer: result('j1'), sentAt: T0, resends: 30 }];
  t.strictSame(resultsToResend(results, T0 + MAX_RESEND_MS - 1, WINDOW).due, []);
  results = resultsToResend(results, T0 + MAX_RESEND_MS, WINDOW).results;
  t.equal(results[0]?.sentAt, T0 + MAX_RESEND_MS);
});

t.test('on new channels every result goes at once, and the spacing starts over', async (t) => {
  let results = holdResult([], result('j1'), T0).results;
  results = holdResult(results, result('j2'), T0 + WINDOW * 10).results;
  results = resultsToResend(results, T0 + WINDOW * 10, WINDOW).results;
  const step = resultsToResend(results, T0 + WINDOW * 10 + 5, WINDOW, { connected: true });
  t.strictSame(
    step.due.map((a) => a.job_id),
    ['j1', 'j2'],
    'both, in the order they were reported',
  );
  t.strictSame(
    step.results.map((r) => r.resends),
    [0, 0],
  );
  t.strictSame(resultsToResend(step.results, T0 + WINDOW * 11 + 4, WINDOW).due, [], 'next after a window again');
});

t.test('a result still waiting in the connection is not queued twice', async (t) => {
  const results = holdResult([], result('j1'), T0).results;
  const queued = (a: ResultAnswer) => a.job_id === 'j1';
  const step = resultsToResend(results, T0 + WINDOW, WINDOW, { queued });
  t.strictSame(step.due, []);
  t.equal(step.results[0]?.sentAt, T0 + WINDOW, 'it counts as sent: it will be');
  t.strictSame(resultsToResend(results, T0 + 1, WINDOW, { connected: true, queued }).due, []);
});
