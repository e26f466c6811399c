// The server's lag from what the hub sees, at times given: a heartbeat backlog's age, a probe held up, the largest
// lag held for a while (a stall for as long as it lasted), and the largest since start.
import t from 'tap';
import { LagMeter } from '../../src/transport/lag-meter.js';

const T0 = 1_000_000;
const PROBE = 50;
const HOLD = 3000;
const meter = (): LagMeter => new LagMeter({ probeMs: PROBE, holdMs: HOLD }, T0);

t.test('no lag while the channel is read empty and the probe runs on time', async (t) => {
  const m = meter();
  for (let at = T0 + PROBE; at <= T0 + 10 * PROBE; at += PROBE) {
    m.probe(at);
    m.channel(at, false);
  }
  t.same(m.lagAt(T0 + 10 * PROBE + 10, false), { backlog: 0, stall: 0 });
  t.same(m.figures(T0 + 10 * PROBE + 10, false), { current_ms: 0, max_ms: 0 });
});

t.test('heartbeats waiting unread: the lag is how long since the channel was last seen empty', async (t) => {
  const m = meter();
  m.probe(T0 + PROBE);
  m.channel(T0 + PROBE, false);
  for (let at = T0 + 2 * PROBE; at <= T0 + 40 * PROBE; at += PROBE) {
    m.probe(at);
    m.channel(at, true);
  }
  t.same(m.lagAt(T0 + 40 * PROBE, true), { backlog: 39 * PROBE, stall: 0 }, 'a backlog since the first probe');
});

t.test('an event loop held up: the probe overdue is lag, whether asked before or after the probe runs', async (t) => {
  const before = meter();
  before.probe(T0 + PROBE);
  t.equal(before.lagAt(T0 + PROBE + 2000, false).stall, 2000 - PROBE, 'asked first: the probe is overdue by the block');
  const after = meter();
  after.probe(T0 + PROBE);
  after.probe(T0 + PROBE + 2000);
  t.equal(after.lagAt(T0 + PROBE + 2001, false).stall, 2000 - PROBE, 'the probe ran first: it saw itself late');
});

t.test('a lag counts for the hold after it was seen, then no more; its maximum stays', async (t) => {
  const m = meter();
  m.probe(T0 + PROBE);
  const end = T0 + PROBE + 1000;
  m.probe(end); // held up 950 ms
  let at = end;
  for (; at <= end + HOLD; at += PROBE) m.probe(at);
  t.equal(m.lagAt(end + HOLD, false).stall, 1000 - PROBE, 'held to the end of the hold');
  for (; at <= end + HOLD + 200; at += PROBE) m.probe(at);
  t.same(m.figures(at - PROBE, false), { current_ms: 0, max_ms: 1000 - PROBE }, 'then gone, but the maximum stays');
});

t.test('a smaller lag seen within the hold leaves the larger one; a larger one replaces it', async (t) => {
  const m = meter();
  /** Probes on time up to `to`, the channel seen as `waiting` at each. */
  let at = T0;
  const probeTo = (to: number, waiting: boolean): void => {
    while (at + PROBE <= to) {
      at += PROBE;
      m.probe(at);
      m.channel(at, waiting);
    }
  };
  probeTo(T0 + 500, true);
  t.equal(m.lagAt(at, true).backlog, 500, 'a backlog of 500 ms');
  probeTo(T0 + 600, false);
  probeTo(T0 + 800, true);
  t.equal(m.lagAt(at, true).backlog, 500, 'a newer backlog of 200 ms: the larger one is held');
  probeTo(T0 + 1500, true);
  t.equal(m.lagAt(at, true).backlog, 900, 'the backlog outgrows it');
});

t.test(
  'a stall longer than the hold (the process paused) counts, apart from the backlog, for as long as it lasted',
  async (t) => {
    const m = meter();
    m.probe(T0 + PROBE);
    m.channel(T0 + PROBE, false);
    const woke = T0 + PROBE + 20_000; // SIGSTOP for 20 s, then SIGCONT: the overdue probe runs first
    m.probe(woke);
    const stall = 20_000 - PROBE;
    m.channel(woke, true); // the heartbeats sent meanwhile wait in the socket, unread since before the pause
    let at = woke;
    /** From then on the probe runs on time and the channel is read empty, up to `to`. */
    const runTo = (to: number): number => {
      for (; at + PROBE <= to; at += PROBE) {
        m.probe(at + PROBE);
        m.channel(at + PROBE, false);
      }
      return at;
    };
    t.same(m.lagAt(runTo(woke + 200), false), { backlog: 20_000, stall }, 'right after: both');
    t.same(m.lagAt(runTo(woke + HOLD + 1000), false), { backlog: 0, stall }, 'past the hold, the stall alone counts');
    t.equal(m.lagAt(runTo(woke + stall), false).stall, stall, 'as long again as it lasted');
    t.same(m.lagAt(runTo(woke + stall + PROBE), false), { backlog: 0, stall: 0 }, 'then no more');
    t.same(m.figures(at, false), { current_ms: 0, max_ms: 20_000 }, 'the maximum stays');
  },
);
