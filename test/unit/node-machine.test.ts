// The node machine: every cell of its table, thresholds at their edges, restore, and the allocation-free heartbeat.
import t from 'tap';
import {
  isAvailable,
  newNode,
  nodeRecord,
  nodeRecordSchema,
  tickDue as tickDueAt,
  stepNode,
  type NodeConfig,
  type NodeEffect,
  type NodeEvent,
  type NodeState,
  type NodeStep,
} from '../../actors/push/node-machine.js';
import type { ServerLag } from '../../actors/push/ports.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
/** A lag of heartbeats waiting unread (a backlog), in ms, or as given. */
const lagOf = (lag: number | ServerLag): ServerLag => (typeof lag === 'number' ? { backlog: lag, stall: 0 } : lag);
const tickDue = (state: NodeState, at: number, lag: number | ServerLag): boolean => tickDueAt(state, at, lagOf(lag));
const I = 1000;
const config: NodeConfig = { heartbeat_interval: I, offline_threshold: 3, online_threshold: 2 };

type Beat = Extract<NodeEvent, { type: 'heartbeat' }>;
type Answer = Extract<NodeEvent, { type: 'answer' }>;
// The client's sequences rise with its clock here: a message sent later has the larger one.
const hb = (at: number, incarnation = 'inc-1'): Beat => ({
  type: 'heartbeat',
  at,
  incarnation,
  job: 'none',
  job_id: null,
  job_state: 'idle',
  sequence: at - T0,
  lag: lagOf(0),
});
/** An answer at T0 + 1500 about job j1, which runs (`known`) or not. */
const answerOf = (answer: Answer['answer'], job: 'known' | 'unknown'): Answer => ({
  type: 'answer',
  at: T0 + 1500,
  answer,
  job_id: 'j1',
  job,
  sequence: 1500,
});
const aborted = (at: number): Answer => ({
  type: 'answer',
  at,
  answer: 'aborted',
  job_id: null,
  job: 'none',
  sequence: at - T0,
});
const tick = (at: number, lag = 0): NodeEvent => ({ type: 'tick', at, lag: lagOf(lag) });

/** Steps each event in turn, feeding each result's state to the next; returns the last step. */
function run(state: NodeState, ...events: NodeEvent[]): NodeStep {
  let step: NodeStep = { state, effects: [] };
  for (const event of events) step = stepNode(step.state, event);
  return step;
}

const down = (cfg = config): NodeState => newNode({ node_name: 'web1', config: cfg, at: T0 });
/** Up and waiting for `aborted`; last heartbeat and abort at T0 + I. */
const inRehab = (): NodeState => run(down(), hb(T0), hb(T0 + I)).state;
/** Up and available; last heartbeat at T0 + I. */
const available = (): NodeState => run(inRehab(), aborted(T0 + I + 10)).state;

const availabilityChanged = (status: 'up' | 'down', isAvail: boolean, updated_at: number): NodeEffect => ({
  type: 'availability_changed',
  node_name: 'web1',
  status,
  available: isAvail,
  updated_at,
});
const SEND_ABORT: NodeEffect = { type: 'send', message: 'abort' };
const FORWARD: NodeEffect = { type: 'forward' };
const NOT_IN_REHAB: NodeEffect = { type: 'ignored', reason: 'not_in_rehab' };
const INCARNATION: NodeEffect = { type: 'incarnation_changed', node_name: 'web1', from: 'inc-1', to: 'inc-2' };

t.test('the fixtures are in the buckets they claim', async (t) => {
  t.match(down(), { status: 'down', rehab: false, incarnation: null });
  t.match(inRehab(), { status: 'up', rehab: true, incarnation: 'inc-1', updated_at: T0 + I });
  t.match(available(), { status: 'up', rehab: false, updated_at: T0 + I });
  t.ok(isAvailable(available()));
  t.notOk(isAvailable(inRehab()));
  t.notOk(isAvailable(down()));
});

t.test('table row beat: a heartbeat that completes nothing changes nothing visible', async (t) => {
  const d = run(down(), hb(T0)).state;
  const step = stepNode(d, hb(T0 + 5 * I));
  t.equal(step.state, d, 'down: a restarted streak keeps the node down');
  t.same(step.effects, []);
  for (const [name, s] of [
    ['rehab', inRehab()],
    ['available', available()],
  ] as const) {
    const r = stepNode(s, hb(T0 + 2 * I));
    t.equal(r.state, s, `${name}: same state object`);
    t.same(r.effects, [], `${name}: no effects`);
  }
});

t.test('table row online: the streak completing brings a down node up, into rehab', async (t) => {
  const first = run(down(), hb(T0)).state;
  const step = stepNode(first, hb(T0 + I));
  t.match(step.state, { status: 'up', rehab: true, updated_at: T0 + I });
  t.same(step.effects, [availabilityChanged('up', false, T0 + I), SEND_ABORT]);
  for (const [name, s] of [
    ['rehab', inRehab()],
    ['available', available()],
  ] as const) {
    const r = run(s, hb(T0 + 2 * I), hb(T0 + 3 * I), hb(T0 + 4 * I));
    t.equal(r.state, s, `${name}: more heartbeats do not bring it up again`);
    t.same(r.effects, []);
  }
});

t.test('table row new_incarnation: the client restarted (reference 2.8)', async (t) => {
  t.test('available: jobs see it lose availability, and it is sent abort', async (t) => {
    const s = available();
    const step = stepNode(s, hb(T0 + 2 * I, 'inc-2'));
    t.match(step.state, { status: 'up', rehab: true, incarnation: 'inc-2', updated_at: T0 + I });
    t.same(step.effects, [INCARNATION, availabilityChanged('up', false, T0 + I), SEND_ABORT]);
  });
  t.test('rehab: the new process is sent abort at once', async (t) => {
    const step = stepNode(inRehab(), hb(T0 + 1.2 * I, 'inc-2'));
    t.match(step.state, { status: 'up', rehab: true, incarnation: 'inc-2' });
    t.same(step.effects, [INCARNATION, SEND_ABORT]);
  });
  t.test('down: the streak starts over with the new process', async (t) => {
    const first = run(down(), hb(T0)).state;
    const step = stepNode(first, hb(T0 + I, 'inc-2'));
    t.match(step.state, { status: 'down', incarnation: 'inc-2' });
    t.same(step.effects, [INCARNATION]);
    const next = stepNode(step.state, hb(T0 + 2 * I, 'inc-2'));
    t.equal(next.state.status, 'up', 'online_threshold heartbeats of the new process bring it up');
  });
  t.test('the first incarnation ever heard is adopted silently', async (t) => {
    const d = down();
    const step = stepNode(d, hb(T0));
    t.not(step.state, d, 'a visible field changed: a fresh object');
    t.equal(step.state.incarnation, 'inc-1');
    t.same(step.effects, []);
  });
});

t.test('table row silence: more than offline_threshold intervals without a heartbeat', async (t) => {
  const d = down();
  const quiet = stepNode(d, tick(T0 + 100 * I));
  t.equal(quiet.state, d, 'down: stays as it is');
  t.same(quiet.effects, []);
  for (const [name, s] of [
    ['rehab', inRehab()],
    ['available', available()],
  ] as const) {
    const at = T0 + I + 3 * I + 1;
    const step = stepNode(s, tick(at));
    t.match(step.state, { status: 'down', rehab: false, updated_at: at }, `${name} goes down`);
    t.same(step.effects, [availabilityChanged('down', false, at)]);
  }
});

t.test('table row resend: abort is sent again every heartbeat interval until answered', async (t) => {
  const s = inRehab(); // abort sent at T0 + I
  s.last_heartbeat_at = T0 + 2 * I;
  const early = stepNode(s, tick(T0 + 2 * I - 1));
  t.equal(early.state, s);
  t.same(early.effects, [], 'not yet due');
  const due = stepNode(s, tick(T0 + 2 * I));
  t.equal(due.state, s, 'the state object stays');
  t.same(due.effects, [SEND_ABORT]);
  t.same(stepNode(s, tick(T0 + 3 * I - 1)).effects, [], 'the resend restarted the period');
  const a = available();
  t.same(stepNode(a, tick(T0 + 3 * I)).effects, [], 'available: nothing to resend');
  t.same(stepNode(down(), tick(T0 + 3 * I)).effects, [], 'down: nothing to resend');
});

t.test('table row aborted: only ends rehab', async (t) => {
  const step = stepNode(inRehab(), aborted(T0 + 1500));
  t.match(step.state, { status: 'up', rehab: false, updated_at: T0 + I }, 'status did not change, nor updated_at');
  t.same(step.effects, [availabilityChanged('up', true, T0 + I)]);
  for (const [name, s] of [
    ['down', down()],
    ['available', available()],
  ] as const) {
    const r = stepNode(s, aborted(T0 + 1500));
    t.equal(r.state, s, `${name}: no move`);
    t.same(r.effects, [NOT_IN_REHAB]);
  }
});

t.test('table row unknown_job: a client holding a job the server does not run is reset', async (t) => {
  const holding = (at: number): NodeEvent => ({
    type: 'answer',
    at,
    answer: 'ack_run',
    job_id: 'j1',
    job: 'unknown',
    sequence: at - T0,
  });
  const step = stepNode(available(), holding(T0 + 1500));
  t.match(step.state, { status: 'up', rehab: true, updated_at: T0 + I });
  t.same(step.effects, [availabilityChanged('up', false, T0 + I), SEND_ABORT]);
  for (const [name, s] of [
    ['down', down()],
    ['rehab', inRehab()],
  ] as const) {
    const r = stepNode(s, holding(T0 + 1500));
    t.equal(r.state, s, `${name}: nothing to do`);
    t.same(r.effects, []);
  }
  const beat = stepNode(available(), { ...hb(T0 + 2 * I), job: 'unknown' });
  t.match(beat.state, { rehab: true }, 'a heartbeat naming an unknown job resets the node too');
  t.same(beat.effects, [availabilityChanged('up', false, T0 + I), SEND_ABORT]);
});

t.test(
  'table row stale_job: a heartbeat sent before the latest answer names a job that answer may have ended',
  async (t) => {
    // The result of a job that then ended, read before a heartbeat the client sent while it still ran the job.
    const a = run(available(), {
      type: 'answer',
      at: T0 + 3000,
      answer: 'succeeded',
      job_id: 'j1',
      job: 'known',
      sequence: 2000,
    }).state;
    const late = stepNode(a, { ...hb(T0 + 3010), job: 'unknown', sequence: 1900 });
    t.equal(late.state, a, 'still available');
    t.same(late.effects, []);
    const after = stepNode(a, { ...hb(T0 + 3020), job: 'unknown', sequence: 2100 });
    t.match(after.state, { rehab: true }, 'one sent after the answer still resets the node');
    // A new client process counts from the start again: its heartbeats are read against its own answers only.
    const restarted = run(a, hb(T0 + 4000, 'inc-2'), { ...aborted(T0 + 4100), sequence: 2 }).state;
    t.match(restarted, { incarnation: 'inc-2', rehab: false });
    const fresh = stepNode(restarted, { ...hb(T0 + 4200, 'inc-2'), job: 'unknown', sequence: 3 });
    t.match(fresh.state, { rehab: true }, "the old process's answers do not make the new one's heartbeats stale");
  },
);

t.test(
  'answers: one about a live job goes on to it; a refusal or a result of an unknown job resets nothing',
  async (t) => {
    const a = available();
    const live = stepNode(a, answerOf('succeeded', 'known'));
    t.equal(live.state, a, 'no move');
    t.same(live.effects, [FORWARD]);
    const late = stepNode(a, answerOf('nack_commit', 'unknown'));
    t.equal(late.state, a, 'a node refusing a job it does not hold needs no reset');
    t.same(late.effects, [{ type: 'ignored', reason: 'answer_for_unknown_job' }]);
    for (const result of ['succeeded', 'failed'] as const) {
      const resent = stepNode(a, answerOf(result, 'unknown'));
      t.equal(resent.state, a, `${result} for a job that runs no more resets nothing: the client is idle`);
      t.same(
        resent.effects,
        [{ type: 'ignored', reason: 'answer_for_unknown_job' }, { type: 'ack_result' }],
        `${result} for a job that runs no more is acknowledged, so its client stops sending it`,
      );
    }
    const dropped = stepNode(a, answerOf('nack_run', 'unknown'));
    t.same(dropped.effects, [{ type: 'ignored', reason: 'answer_for_unknown_job' }], 'only results are acknowledged');
    const abortedLive = stepNode(inRehab(), { ...aborted(T0 + 1500), job_id: 'j1', job: 'known' });
    t.same(
      abortedLive.effects,
      [availabilityChanged('up', true, T0 + I), FORWARD],
      'aborted ends rehab and reaches its job',
    );
  },
);

t.test("an event without a time breaks an invariant and throws (the actor's crash policy takes over)", async (t) => {
  t.throws(() => stepNode(available(), tick(Number.NaN)), RangeError);
  t.throws(() => stepNode(available(), tick(T0 + 10 * I, Number.NaN)), RangeError, 'nor a tick without a lag');
});

t.test('offline_threshold at its edge', async (t) => {
  const s = available(); // last heartbeat T0 + I
  const edge = stepNode(s, tick(T0 + I + 3 * I));
  t.equal(edge.state, s, 'exactly offline_threshold intervals of silence: still up');
  t.equal(stepNode(s, tick(T0 + I + 3 * I + 1)).state.status, 'down', 'one millisecond more: down');
});

t.test('tickDue says ahead of a tick whether that tick would do anything', async (t) => {
  const cases: Array<[string, () => NodeState]> = [
    ['available', available],
    ['in rehab', inRehab],
    ['down', down],
  ];
  // Around an interval (a rehab resend), the offline threshold, and long after; a fresh node each time, as a
  // resend records its time in the state it is given.
  const offsets = [0, I - 1, I, I + 1, 3 * I, 3 * I + 1, 100 * I];
  for (const [name, fresh] of cases) {
    for (const offset of offsets) {
      for (const lag of [0, 2 * I]) {
        const s = fresh();
        const due = tickDue(s, T0 + I + offset, lag);
        const step = stepNode(s, tick(T0 + I + offset, lag));
        t.equal(due, step.effects.length > 0, `${name}, ${offset} ms after the last heartbeat, lag ${lag} ms`);
      }
    }
  }
  t.ok(tickDue(inRehab(), T0 + 2 * I, 0), 'in rehab an interval after the abort: a resend is due');
  t.notOk(tickDue(available(), T0 + I + 3 * I, 0), 'exactly the threshold: not yet');
  t.ok(tickDue(available(), T0 + I + 3 * I + 1, 0), 'past it: due');
  t.notOk(tickDue(down(), T0 + 100 * I, 0), 'a node already down is never due');
});

t.test('online_threshold at its edge', async (t) => {
  const three = { ...config, online_threshold: 3 };
  t.equal(run(down(three), hb(T0), hb(T0 + I)).state.status, 'down', 'two of three heartbeats: down');
  t.equal(run(down(three), hb(T0), hb(T0 + I), hb(T0 + 2 * I)).state.status, 'up', 'the third: up');
  t.equal(run(down({ ...config, online_threshold: 1 }), hb(T0)).state.status, 'up', 'threshold 1: first heartbeat');
  t.equal(run(down(), hb(T0), hb(T0 + 2 * I)).state.status, 'down', 'a gap of two intervals restarts the streak');
  t.equal(run(down(), hb(T0), hb(T0 + 2 * I - 1)).state.status, 'up', 'just under two intervals counts');
  t.equal(run(down(), hb(T0), hb(T0 + I / 2 - 1)).state.status, 'down', 'a burst within half an interval counts once');
  t.equal(run(down(), hb(T0), hb(T0 + I / 2)).state.status, 'up', 'half an interval later counts');
  t.equal(run(down(), hb(T0), hb(T0 + 100), hb(T0 + 200), hb(T0 + 300)).state.status, 'down', 'a flood proves nothing');
});

t.test('heartbeats on the hot path allocate nothing', async (t) => {
  const s = available();
  const first = stepNode(s, hb(T0 + 2 * I));
  const second = stepNode(s, hb(T0 + 3 * I));
  t.equal(first.state, s, 'same state object');
  t.equal(second, first, 'the same result object every time');
  t.equal(first.effects, stepNode(available(), hb(T0 + 2 * I)).effects, 'one shared empty effects array');
  t.ok(Object.isFrozen(first.effects) && Object.isFrozen(first), 'shared results cannot be altered by a caller');
  t.equal(stepNode(s, tick(T0 + 3 * I + 10)), first, 'a quiet tick returns the same result too');
  t.equal(stepNode(s, tick(T0 + 6 * I)).state, s, 'the heartbeat at T0+3I still counts: up at T0+6I');
  t.equal(stepNode(s, tick(T0 + 6 * I + 1)).state.status, 'down');
  const d = run(down(), hb(T0)).state;
  t.equal(stepNode(d, hb(T0 + 10 * I)).state, d, 'a down node counting heartbeats keeps its object too');
});

t.test('down clears rehab, and coming back up rehabs again', async (t) => {
  const gone = stepNode(inRehab(), tick(T0 + 10 * I)).state;
  t.match(gone, { status: 'down', rehab: false });
  const back = run(gone, hb(T0 + 20 * I), hb(T0 + 21 * I));
  t.match(back.state, { status: 'up', rehab: true, updated_at: T0 + 21 * I });
  t.same(back.effects, [availabilityChanged('up', false, T0 + 21 * I), SEND_ABORT]);
});

t.test('restored from a saved record after a server restart', async (t) => {
  const saved = nodeRecordSchema.parse(JSON.parse(JSON.stringify(nodeRecord(available()))));
  t.same(saved, { node_name: 'web1', status: 'up', updated_at: T0 + I, incarnation: 'inc-1' });
  const at = T0 + 60 * I;
  const restored = (): NodeState => newNode({ node_name: 'web1', config, at, saved });
  const s = restored();
  t.match(s, { status: 'up', rehab: false, updated_at: T0 + I, incarnation: 'inc-1' }, 'up and available, no rehab');
  t.equal(stepNode(s, tick(at + 3 * I)).state, s, 'the silence clock starts at the restart');
  t.equal(stepNode(s, tick(at + 3 * I + 1)).state.status, 'down');
  t.equal(stepNode(s, hb(at + 500)).state, s, 'the same client carries on unchanged');
  t.same(
    stepNode(restored(), hb(at + 500, 'inc-2')).effects,
    [INCARNATION, availabilityChanged('up', false, T0 + I), SEND_ABORT],
    'a client that restarted meanwhile is reset',
  );
  const wasDown = newNode({ node_name: 'web1', config, at, saved: { ...saved, status: 'down' } });
  t.equal(run(wasDown, hb(at + I), hb(at + 2 * I)).state.rehab, true, 'a node saved down comes back through rehab');
});

t.test('newNode refuses a config it cannot run', async (t) => {
  for (const bad of [{ offline_threshold: 0 }, { online_threshold: 1.5 }, { heartbeat_interval: -1 }]) {
    t.throws(() => down({ ...config, ...bad }), RangeError, JSON.stringify(bad));
  }
});
