// The load tester's heartbeat scheduler on a manual clock: every node beats once an interval in a slot of its own;
// a crashed node comes back after a silence past the offline window; once the measured part begins, a flapping node
// falls silent now and then, and with --late-heartbeats every node beats just inside the offline window.
import t from 'tap';
import type { Batches } from '../../src/loadtest/batches.js';
import { HeartbeatSchedule } from '../../src/loadtest/heartbeat-schedule.js';
import type { SimNode } from '../../src/loadtest/sim-node.js';
import { ManualClock } from '../support/manual-clock.js';

const INTERVAL_MS = 1000;
const THRESHOLD = 3;

/** As much of a simulated node as the scheduler reads: `beats` says when each of its heartbeats went. */
function nodeOf(clock: ManualClock, name: string, flap = false) {
  const node = {
    name,
    config: { intervalMs: INTERVAL_MS, offlineThreshold: THRESHOLD },
    behaviour: { flap },
    crashed: false,
    connected: true,
    watch: { due: () => false },
    lastBeatAt: 0,
    beats: [] as number[],
    heartbeat() {
      node.lastBeatAt = clock.now();
      node.beats.push(clock.now());
      return true;
    },
    restart() {
      node.crashed = false;
    },
  };
  return node;
}

type Node = ReturnType<typeof nodeOf>;
type Flap = Parameters<Batches['flapped']>[0];

/** A schedule on a manual clock of nodes named `names` (those in `flapping` flap); what it told the batches. */
function scheduleOf(names: string[], options: { flapping?: string[]; lateHeartbeats?: boolean } = {}) {
  const clock = new ManualClock();
  const nodes = names.map((name) => nodeOf(clock, name, options.flapping?.includes(name)));
  const restarted: Array<[string, number]> = [];
  const flaps: Flap[] = [];
  const batches = {
    lag: { enable: () => undefined },
    heartbeatSent: () => undefined,
    restarted: (node: string, at: number) => void restarted.push([node, at]),
    flapped: (flap: Flap) => void flaps.push(flap),
  };
  const deps = {
    batches: batches as unknown as Batches,
    lateHeartbeats: options.lateHeartbeats ?? false,
    random: () => 0,
    refetch: () => undefined,
  };
  const schedule = new HeartbeatSchedule(nodes as unknown as SimNode[], deps, clock);
  return { clock, schedule, nodes, restarted, flaps };
}

t.test('every node beats once an interval, each in a slot of its own', async (t) => {
  const { clock, schedule, nodes } = scheduleOf(['a', 'b', 'c']);
  schedule.run();
  await clock.advance(10 * INTERVAL_MS);
  for (const n of nodes) {
    const perInterval = Array.from({ length: 10 }, (_, k) =>
      n.beats.filter((at) => at >= k * INTERVAL_MS && at < (k + 1) * INTERVAL_MS),
    );
    t.ok(
      perInterval.every((beats) => beats.length === 1),
      `${n.name}: one heartbeat in each interval`,
    );
  }
  t.same(
    nodes.map((n) => n.beats[1]),
    [1000, 1010, 1020],
    'each node in its own 10 ms slot of the interval',
  );
  schedule.stop();
  const sent = nodes.map((n) => n.beats.length);
  await clock.advance(10 * INTERVAL_MS);
  t.same(
    nodes.map((n) => n.beats.length),
    sent,
    'no heartbeat once stopped',
  );
  t.equal(clock.pending, 0);
});

t.test('a crashed node is silent past the offline window, two intervals more, then a new process', async (t) => {
  const { clock, schedule, nodes, restarted } = scheduleOf(['a']);
  const node = nodes[0] as Node;
  schedule.run();
  await clock.advance(INTERVAL_MS);
  node.crashed = true;
  await clock.advance(8 * INTERVAL_MS);
  // Its first visit after the crash, at 2000, counts (3 + 2) intervals from then.
  t.same(node.beats, [10, 1000, 7000, 8000, 9000]);
  t.same(restarted, [['a', 7000]]);
  schedule.stop();
});

t.test(
  'once the measured part begins, a flapping node falls silent past the offline window, then resumes',
  async (t) => {
    const { clock, schedule, nodes, flaps } = scheduleOf(['a'], { flapping: ['a'] });
    const node = nodes[0] as Node;
    schedule.run();
    await clock.advance(2 * INTERVAL_MS);
    t.same(node.beats, [10, 1000, 2000], 'no flap before the measured part');
    schedule.begin();
    await clock.advance(10 * INTERVAL_MS);
    // Three intervals up (random 0) from its first visit at 3000, then silent for (3 + 2) intervals.
    t.same(node.beats, [10, 1000, 2000, 3000, 4000, 5000, 11_000, 12_000]);
    t.same(flaps, [
      { node: 'a', kind: 'stop', at: 5000, due: 5000 + THRESHOLD * INTERVAL_MS },
      { node: 'a', kind: 'resume', at: 11_000, due: 0 },
    ]);
    schedule.stop();
  },
);

t.test('with --late-heartbeats, once the measured part begins, a node beats just inside the window', async (t) => {
  const { clock, schedule, nodes } = scheduleOf(['a'], { lateHeartbeats: true });
  const node = nodes[0] as Node;
  schedule.run();
  await clock.advance(2 * INTERVAL_MS);
  schedule.begin();
  await clock.advance(4 * INTERVAL_MS);
  t.same(node.beats, [10, 1000, 2000, 3000, 5000], 'one beat every offline threshold less one intervals');
  const gaps = node.beats.slice(3).map((at, i) => at - (node.beats[i + 2] ?? 0));
  t.ok(
    gaps.every((g) => g < THRESHOLD * INTERVAL_MS),
    'never silent for the offline window',
  );
  schedule.stop();
});
