// The server's heartbeats and the heartbeat lag's probe on a clock moved by hand: every node heard within the
// offline window is beaten once per interval, spread over its slots; the probe sees the event loop held up by as
// long as it ran late. test/integration/server-lag.test.ts measures a real server.
import t from 'tap';
import { HeartbeatLag } from '../../src/transport/heartbeat-lag.js';
import { ServerHeartbeats, type Beaten } from '../../src/transport/server-heartbeats.js';
import { ManualClock } from '../support/manual-clock.js';

const INTERVAL_MS = 1000;
const WINDOW_MS = 3000;

function heartbeatsOn(clock: ManualClock, peers: Array<[string, string, Beaten]>) {
  const beats: Array<{ node: string; at: number }> = [];
  const rounds: number[] = [];
  const heartbeats = new ServerHeartbeats(
    INTERVAL_MS,
    WINDOW_MS,
    {
      targets: () => peers,
      beat: (_org, node, _identity, now) => beats.push({ node, at: now }),
      roundStarted: (now) => rounds.push(now),
      now: () => clock.now(),
    },
    clock,
  );
  return { heartbeats, beats, rounds };
}

const peer = (lastBeat: number): Beaten => ({ identity: Buffer.from('id'), lastBeat });

t.test('each node heard within the window is beaten once per interval, the nodes spread over it', async (t) => {
  const clock = new ManualClock();
  const peers = Array.from({ length: 20 }, (_, i): [string, string, Beaten] => ['acme', `web${i}`, peer(0)]);
  const { heartbeats, beats, rounds } = heartbeatsOn(clock, peers);
  heartbeats.start();
  await clock.advance(INTERVAL_MS);
  t.same(rounds, [100], 'one round, started at the first slot');
  t.equal(new Set(beats.map((b) => b.node)).size, 20, 'every node beaten');
  t.equal(beats.length, 20, 'once');
  t.same(
    [...new Set(beats.map((b) => b.at))],
    [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000],
    'a slot each tenth of the interval',
  );
  const slotOf = new Map(beats.map((b) => [b.node, b.at]));
  await clock.advance(INTERVAL_MS);
  t.same(rounds, [100, 1100], 'the next round an interval later');
  t.equal(beats.length, 40, 'every node beaten once more');
  t.ok(
    beats.slice(20).every((b) => b.at === (slotOf.get(b.node) ?? 0) + INTERVAL_MS),
    'each in the same slot of the round',
  );
  heartbeats.stop();
  t.equal(clock.pending, 0, 'stopped: no timer is left');
});

t.test('a node silent past the offline window, or not heard yet, is not beaten', async (t) => {
  const clock = new ManualClock();
  const silent = peer(0);
  const unheard: Beaten = { identity: undefined, lastBeat: 0 };
  const { heartbeats, beats } = heartbeatsOn(clock, [
    ['acme', 'silent', silent],
    ['acme', 'unheard', unheard],
  ]);
  heartbeats.start();
  await clock.advance(WINDOW_MS);
  t.equal(beats.filter((b) => b.node === 'silent').length, 3, 'beaten while within the window');
  t.equal(beats.filter((b) => b.node === 'unheard').length, 0, 'never without an identity to write to');
  await clock.advance(2 * INTERVAL_MS);
  t.equal(beats.filter((b) => b.node === 'silent').length, 3, 'not past it');
  heartbeats.stop();
});

t.test("the lag's probe runs every 50 ms and counts a stall by how late it ran", async (t) => {
  const clock = new ManualClock();
  /** Time during which no timer could run: the process was paused, or its event loop held up. */
  let paused = 0;
  const now = () => clock.now() + paused;
  const lag = new HeartbeatLag(WINDOW_MS, now, clock);
  lag.start(now());
  lag.beforeReceive(false); // the heartbeat channel is read empty: no backlog
  t.equal(clock.pending, 1, 'the probe waits');
  await clock.advance(500);
  t.same(lag.lag(now()), { backlog: 0, stall: 0 }, 'probes on time: no stall');
  paused = 400;
  t.equal(lag.lag(now()).stall, 350, 'asked before the late probe ran: the stall so far is seen already');
  await clock.advance(50);
  t.equal(lag.lag(now()).stall, 400, 'the late probe counts it');
  await clock.advance(WINDOW_MS);
  t.equal(lag.lag(now()).stall, 400, 'held for the offline window');
  await clock.advance(50);
  t.equal(lag.lag(now()).stall, 0, 'then gone');
  t.equal(lag.figures().max_ms, 400, 'the largest since start is kept');
  lag.stop();
  t.equal(clock.pending, 0, 'stopped: no timer is left');
});
