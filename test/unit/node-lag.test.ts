// The node machine when the server lags: the offline window grows by the lag a tick carries, a down it defers is
// reported once per silence, the lag never defers past LAG_ALLOWANCE_WINDOWS windows more, and a node coming up
// while heartbeats are read late builds its streak from gaps the lag stretched.
import t from 'tap';
import {
  LAG_ALLOWANCE_WINDOWS,
  newNode,
  stepNode,
  tickDue as tickDueAt,
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
const WINDOW = 3 * I;

const hb = (at: number, lag = 0): NodeEvent => ({
  type: 'heartbeat',
  at,
  incarnation: 'inc-1',
  job: 'none',
  job_id: null,
  job_state: 'idle',
  sequence: at - T0,
  lag: lagOf(lag),
});
const aborted = (at: number): NodeEvent => ({
  type: 'answer',
  at,
  answer: 'aborted',
  job_id: null,
  job: 'none',
  sequence: at - T0,
});
const tick = (at: number, lag: number | ServerLag): NodeEvent => ({ type: 'tick', at, lag: lagOf(lag) });

function run(state: NodeState, ...events: NodeEvent[]): NodeStep {
  let step: NodeStep = { state, effects: [] };
  for (const event of events) step = stepNode(step.state, event);
  return step;
}

/** Up and waiting for `aborted`; last heartbeat and abort at T0 + I. */
const inRehab = (): NodeState => run(newNode({ node_name: 'web1', config, at: T0 }), hb(T0), hb(T0 + I)).state;
/** Up and available; last heartbeat at T0 + I. */
const available = (): NodeState => run(inRehab(), aborted(T0 + I + 10)).state;
const LAST = T0 + I;

const DEFERRED: NodeEffect = { type: 'down_deferred' };
const SEND_ABORT: NodeEffect = { type: 'send', message: 'abort' };
const wentDown = (at: number): NodeEffect => ({
  type: 'availability_changed',
  node_name: 'web1',
  status: 'down',
  available: false,
  updated_at: at,
});

t.test('a node silent past the window while the server lagged stays up, and the deferral is reported', async (t) => {
  const s = available();
  const at = LAST + WINDOW + 500;
  t.ok(tickDue(s, at, 1000), 'the sweep ticks it: there is a deferral to report');
  const step = stepNode(s, tick(at, 1000));
  t.match(step.state, { status: 'up', rehab: false, updated_at: LAST }, 'still up and available');
  t.same(step.effects, [DEFERRED]);
  t.notOk(tickDue(step.state, at + 100, 1000), 'reported once: later sweeps within the lag have nothing to do');
  const again = stepNode(step.state, tick(at + 400, 1000));
  t.equal(again.state, step.state, 'the same silence deferred again changes nothing');
  t.same(again.effects, []);
});

t.test('once the lag clears and the silence persists, the node goes down', async (t) => {
  const deferred = stepNode(available(), tick(LAST + WINDOW + 500, 1000)).state;
  const at = LAST + WINDOW + 600;
  t.ok(tickDue(deferred, at, 0), 'due once the lag is gone');
  const step = stepNode(deferred, tick(at, 0));
  t.match(step.state, { status: 'down', updated_at: at });
  t.same(step.effects, [wentDown(at)]);
});

t.test('silence longer than the window plus the lag is down even while the server lags', async (t) => {
  const s = available();
  t.equal(stepNode(s, tick(LAST + WINDOW + 1000, 1000)).state.status, 'up', 'exactly window + lag: still up');
  const at = LAST + WINDOW + 1001;
  const step = stepNode(s, tick(at, 1000));
  t.same(step.effects, [wentDown(at)], 'one millisecond more: down');
});

t.test('lag never defers a down past LAG_ALLOWANCE_WINDOWS windows more', async (t) => {
  const bound = WINDOW * (1 + LAG_ALLOWANCE_WINDOWS);
  const wedged = 1e9; // a server stuck behind its heartbeats for good
  const s = available();
  t.equal(stepNode(s, tick(LAST + bound, wedged)).state.status, 'up', 'silent exactly the bound: still up');
  t.equal(stepNode(available(), tick(LAST + bound + 1, wedged)).state.status, 'down', 'past it: down');
  t.ok(tickDue(available(), LAST + bound + 1, wedged), 'and the sweep ticks it');
});

t.test(
  'a stall of the server (paused past the cap) defers a down by all of its length; a backlog does not',
  async (t) => {
    const stall = 20 * I; // SIGSTOP for 20 s: more than LAG_ALLOWANCE_WINDOWS windows
    t.ok(stall > LAG_ALLOWANCE_WINDOWS * WINDOW, 'the stall is past the cap');
    const at = LAST + stall + WINDOW;
    const paused = stepNode(available(), tick(at, { backlog: 0, stall }));
    t.equal(paused.state.status, 'up', 'silent for the stall and a window: still up');
    t.same(paused.effects, [DEFERRED], 'and counted as deferred');
    t.equal(stepNode(available(), tick(at + 1, { backlog: 0, stall })).state.status, 'down', 'one ms more: down');
    t.equal(stepNode(available(), tick(at, stall)).state.status, 'down', 'a backlog as long stretches by the cap only');
    const both = { backlog: LAG_ALLOWANCE_WINDOWS * WINDOW, stall: 1000 };
    t.equal(
      stepNode(available(), tick(LAST + WINDOW * (1 + LAG_ALLOWANCE_WINDOWS), both)).state.status,
      'up',
      'the larger part counts',
    );
  },
);

t.test('a heartbeat ends the silence: the next silence deferred is reported again', async (t) => {
  const first = stepNode(available(), tick(LAST + WINDOW + 500, 1000)).state;
  const beat = LAST + WINDOW + 800;
  const heard = stepNode(first, hb(beat)).state;
  t.notOk(tickDue(heard, beat + WINDOW, 1000), 'heard again: nothing due within the window');
  const step = stepNode(heard, tick(beat + WINDOW + 1, 1000));
  t.equal(step.state.status, 'up');
  t.same(step.effects, [DEFERRED], 'a new silence, a new deferral');
});

t.test('in rehab, a deferred down still resends the abort when due', async (t) => {
  const at = LAST + WINDOW + 1;
  const step = stepNode(inRehab(), tick(at, 2000));
  t.match(step.state, { status: 'up', rehab: true });
  t.same(step.effects, [SEND_ABORT, DEFERRED]);
});

t.test('no lag, or none to speak of, leaves the window as configured', async (t) => {
  for (const lag of [0, -5]) {
    const at = LAST + WINDOW + 1;
    t.same(stepNode(available(), tick(at, lag)).effects, [wentDown(at)], `lag ${lag}`);
  }
  const down = stepNode(available(), tick(LAST + WINDOW + 1, 0)).state;
  t.notOk(tickDue(down, LAST + 100 * I, 1000), 'a node already down is never due');
  t.same(stepNode(down, tick(LAST + 100 * I, 1000)).effects, [], 'nor changed by a lagging tick');
});

t.test('a node coming up while heartbeats are read late: gaps within two intervals plus the lag count', async (t) => {
  const down = (): NodeState => newNode({ node_name: 'web1', config, at: T0 });
  // Read 2.5 intervals apart, as a server reading a backlog of 5,000 nodes at 2,000 a second would.
  const gap = 2.5 * I;
  const late = run(down(), hb(T0, 1500), hb(T0 + gap, 1500));
  t.match(late.state, { status: 'up', rehab: true }, 'two heartbeats make the streak: the node goes to rehab');
  t.same(late.effects, [
    { type: 'availability_changed', node_name: 'web1', status: 'up', available: false, updated_at: T0 + gap },
    SEND_ABORT,
  ]);
  const prompt = run(down(), hb(T0), hb(T0 + gap));
  t.match(prompt.state, { status: 'down', streak: 1 }, 'without a lag the gap missed a beat: the streak restarts');
  const tooLong = run(down(), hb(T0, 1500), hb(T0 + 2 * I + 1501, 1500));
  t.match(tooLong.state, { status: 'down', streak: 1 }, 'a gap past two intervals plus the lag restarts it');
  const cap = LAG_ALLOWANCE_WINDOWS * WINDOW;
  const wedged = run(down(), hb(T0, 10 * cap), hb(T0 + 2 * I + cap + 1, 10 * cap));
  t.match(wedged.state, { status: 'down' }, 'the lag stretches a gap by LAG_ALLOWANCE_WINDOWS windows at most');
});
