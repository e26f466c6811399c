// A node's own record read from its client.log, lines written by the client's own formatter as the job runner and
// the push client word them: what it committed to, ran, reported and aborted, its drops and reconfigures.
import t from 'tap';
import { formatLine } from '../../src/client/logger.js';
import { parseClientLog } from '../support/chaos/client-records.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (s: number) => T0 + s * 1000;
type Level = Parameters<typeof formatLine>[0];
const log = (lines: Array<[number, Level, string]>) => lines.map(([s, l, m]) => formatLine(l, m, at(s))).join('');

const J1 = '0b6c1f0e5a7d4c2b9e8f7a6b5c4d3e2f';
const J2 = 'f1e2d3c4b5a697887766554433221100';
const J3 = 'aa11bb22cc33dd44ee55ff6600778899';

t.test('a job committed, run and reported succeeded', async (t) => {
  const r = parseClientLog(
    'n1',
    log([
      [0, 'info', 'push-jobs-client 0.1.0 starting: node n1, organization default at http://127.0.0.1:4000'],
      [1, 'info', 'connected to tcp://127.0.0.1:4001 and tcp://127.0.0.1:4002 (CurveZMQ), server incarnation x'],
      [2, 'info', `job ${J1}: committed to 'long'`],
      [2.1, 'info', `job ${J1}: running 'sleep 8' as process group 4242`],
      [10.1, 'info', `job ${J1}: succeeded (exit status 0)`],
    ]),
  );
  t.equal(r.node, 'n1');
  t.same(r.starts, [at(0)]);
  t.same(r.connections, [{ at: at(1), heartbeat: 'tcp://127.0.0.1:4001' }]);
  const j = r.jobs[J1];
  t.same(j?.committed, { at: at(2), command: 'long' });
  t.same(j?.ran, { at: at(2.1), commandLine: 'sleep 8', pgid: 4242 });
  t.same(j?.outcome, { at: at(10.1), status: 'succeeded', how: 'exit status 0', exitStatus: 0 });
  t.equal(j?.aborted, undefined);
  t.equal(j?.lines.length, 3, 'the job’s lines are kept for a report');
});

t.test('failures, with the exit status sent or none', async (t) => {
  const r = parseClientLog(
    'n1',
    log([
      [1, 'info', `job ${J1}: failed (exit status 3)`],
      [2, 'info', `job ${J2}: failed (killed by SIGKILL)`],
      [3, 'warn', `job ${J3}: run_timeout of 5 s reached, stopping its process group`],
      [6, 'info', `job ${J3}: failed (stopped by run_timeout)`],
    ]),
  );
  t.same(r.jobs[J1]?.outcome, { at: at(1), status: 'failed', how: 'exit status 3', exitStatus: 3 });
  t.same(r.jobs[J2]?.outcome, { at: at(2), status: 'failed', how: 'killed by SIGKILL', exitStatus: null });
  t.equal(r.jobs[J3]?.timedOutAt, at(3));
  t.equal(r.jobs[J3]?.outcome?.how, 'stopped by run_timeout');
  t.same(r.otherWarnings, [], 'the run_timeout warning is a step of the job');
});

t.test('aborts by phase, refusals with their reason, refused runs and shutdowns', async (t) => {
  const r = parseClientLog(
    'n2',
    log([
      [1, 'info', `job ${J1}: committed to 'long'`],
      [2, 'info', `job ${J1}: aborting (committed)`],
      [2.2, 'info', `job ${J1}: aborted`],
      [3, 'info', `job ${J2}: refused 'long' (busy): busy with job ${J1}`],
      [4, 'warn', `job ${J3}: run refused, no job is committed`],
      [5, 'info', `job ${J2}: stopping for shutdown (running)`],
    ]),
  );
  t.same(r.jobs[J1]?.aborted, { at: at(2), phase: 'committed' });
  t.same(r.jobs[J2]?.refused, { at: at(3), command: 'long', reason: 'busy', detail: `busy with job ${J1}` });
  t.same(r.jobs[J3]?.runRefused, { at: at(4), detail: 'no job is committed' });
  t.same(r.jobs[J2]?.shutdown, { at: at(5), phase: 'running' });
  t.same(r.otherWarnings, []);
});

t.test('dropped messages are counted by reason, the ones not logged included', async (t) => {
  const r = parseClientLog(
    'n3',
    log([
      [1, 'warn', 'dropped message (replay): sequence 12 of incarnation abc already seen'],
      [
        70,
        'warn',
        'dropped message (replay): sequence 99 of incarnation abc already seen; 41 more replay drops not logged',
      ],
      [71, 'warn', 'dropped message (bad_signature): the signature does not match'],
    ]),
  );
  t.same(r.drops, { replay: 43, bad_signature: 1 });
  t.same(r.firstDrops.replay, {
    at: at(1),
    line: 'dropped message (replay): sequence 12 of incarnation abc already seen',
  });
});

t.test('reconfigures, silences, restarts and other warnings', async (t) => {
  const r = parseClientLog(
    'n4',
    log([
      [0, 'info', 'push-jobs-client 0.1.0 starting: node n4, organization default at http://x'],
      [5, 'warn', 'no heartbeat from the server for 3000 ms: finishing the current job, refusing new ones'],
      [6, 'info', 'reconfiguring: the server stayed silent'],
      [6.5, 'warn', 'reconfigure failed (connect ECONNREFUSED); trying again in 800 ms'],
      [8, 'info', 'connected to tcp://127.0.0.1:5001 and tcp://127.0.0.1:5002 (CurveZMQ), server incarnation y'],
      [20, 'info', 'push-jobs-client 0.1.0 starting: node n4, organization default at http://x'],
    ]),
  );
  t.same(r.offline, [at(5)]);
  t.same(r.reconfigures, [{ at: at(6), why: 'the server stayed silent' }]);
  t.same(r.starts, [at(0), at(20)], 'two starts: the client was started again');
  t.equal(r.otherWarnings.length, 1);
  t.match(r.otherWarnings[0], /reconfigure failed/);
});

t.test('lines that are not log lines are skipped, a message with escaped newlines kept whole', async (t) => {
  const text = `${log([[1, 'info', `job ${J1}: committed to 'long'`]])}garbage\n2026-13-99 INFO x\n\n${log([
    [2, 'error', 'something\nacross lines'],
  ])}`;
  const r = parseClientLog('n5', text);
  t.same(Object.keys(r.jobs), [J1]);
  t.same(r.otherWarnings.length, 1);
  t.match(r.otherWarnings[0], /something\\nacross lines/);
});
