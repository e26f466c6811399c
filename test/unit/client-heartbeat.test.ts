// The node's view of the server heartbeat (spec 3.3, reference 4.3, 2.8): one case per row of the machine.
import t from 'tap';
import { newLiveness, stepLiveness, type Liveness, type LivenessEvent } from '../../src/client/heartbeat.js';

const config = { intervalMs: 1000, offlineThreshold: 3, graceIntervals: 3 };
const SERVER = 'server-1';
const beat = (at: number, incarnation = SERVER): LivenessEvent => ({ type: 'server_heartbeat', at, incarnation });
const tick = (at: number): LivenessEvent => ({ type: 'tick', at });

/** Runs events in order; returns the last state and every effect type seen. */
function run(
  events: LivenessEvent[],
  from: Liveness = newLiveness(config, SERVER, 0),
): { state: Liveness; effects: string[] } {
  let state = from;
  const effects: string[] = [];
  for (const e of events) {
    const step = stepLiveness(state, e);
    state = step.state;
    for (const effect of step.effects)
      effects.push(effect.type === 'reconfigure' ? `reconfigure:${effect.reason}` : effect.type);
  }
  return { state, effects };
}

t.test(
  'a fresh connection accepts jobs until the server has been silent for offline_threshold intervals',
  async (t) => {
    t.equal(newLiveness(config, SERVER, 0).online, true);
    t.strictSame(run([tick(3000)]), { state: newLiveness(config, SERVER, 0), effects: [] });
    const silent = run([tick(3001)]);
    t.equal(silent.state.online, false);
    t.strictSame(silent.effects, ['went_offline']);
  },
);

t.test('heartbeats keep the server online', async (t) => {
  const r = run([beat(900), tick(1000), beat(1900), tick(3500), beat(2900), tick(5800)]);
  t.equal(r.state.online, true);
  t.strictSame(r.effects, []);
});

t.test('offline, the first heartbeat brings the server back: a job right after a restart is not refused', async (t) => {
  const offline = run([tick(3001)]).state;
  const one = run([beat(3500)], offline);
  t.equal(one.state.online, true);
  t.strictSame(one.effects, ['back_online']);
  const late = run([beat(9000)], offline);
  t.equal(late.state.online, true, 'however long the silence was');
});

t.test('silence past the grace asks for one reconfigure', async (t) => {
  const r = run([tick(3001), tick(6000), tick(6001), tick(9000), tick(20000)]);
  t.strictSame(r.effects, ['went_offline', 'reconfigure:server_silent']);
  t.equal(r.state.reconfiguring, true);
  const spared = run([tick(3001), beat(5000), tick(7900)]);
  t.strictSame(spared.effects, ['went_offline', 'back_online'], 'a heartbeat while offline ends it: no reconfigure');
});

t.test('a heartbeat of another server incarnation asks for one reconfigure and still counts', async (t) => {
  const r = run([beat(500, 'server-2'), beat(1500, 'server-2'), tick(2000)]);
  t.strictSame(r.effects, ['reconfigure:incarnation_changed']);
  t.equal(r.state.online, true);
  t.equal(r.state.lastBeatAt, 1500);
  const whileSilent = run([tick(3001), tick(6001), beat(7000, 'server-2')]);
  t.strictSame(
    whileSilent.effects,
    ['went_offline', 'reconfigure:server_silent', 'back_online'],
    'no second reconfigure while one is asked',
  );
});

t.test('the silence a client logs is in whole milliseconds, on a clock that reads fractions', async (t) => {
  const step = stepLiveness(newLiveness(config, SERVER, 10.25), tick(3012.5));
  t.strictSame(step.effects, [{ type: 'went_offline', silentMs: 3002 }]);
});
