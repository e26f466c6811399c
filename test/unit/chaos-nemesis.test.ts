// The chaos runner's fault schedule: a seed replays the same faults, another seed gives others, and a plan holds
// only the kinds allowed, on members that exist, for the durations asked.
import t from 'tap';
import {
  DEFAULT_DURATIONS,
  describeFault,
  FAULT_KINDS,
  MEMBER_FAULTS,
  mulberry32,
  parseDurations,
  parseKinds,
  planFaults,
  type PlanOptions,
} from '../support/chaos/nemesis.js';

const MIXED: PlanOptions = { seed: 7, rounds: 40, kinds: ['kill', 'pause', 'redis_restart'], members: 3 };

t.test('the generator gives the same numbers for the same seed, each in [0, 1)', async (t) => {
  const a = mulberry32(42);
  const b = mulberry32(42);
  const drawn = Array.from({ length: 1000 }, () => a());
  t.same(
    Array.from({ length: 1000 }, () => b()),
    drawn,
  );
  t.ok(
    drawn.every((x) => x >= 0 && x < 1),
    'every number is in [0, 1)',
  );
  t.ok(new Set(drawn).size > 990, 'and they hardly repeat');
});

t.test('the same seed plans the same faults', async (t) => {
  t.same(planFaults(MIXED), planFaults({ ...MIXED }));
});

t.test('different seeds plan different faults', async (t) => {
  const plans = [1, 2, 3, 4, 5].map((seed) => JSON.stringify(planFaults({ ...MIXED, seed })));
  t.equal(new Set(plans).size, plans.length, 'five seeds, five plans');
});

t.test('a plan has one fault a round, of the kinds allowed only, and every kind within each block', async (t) => {
  for (const kinds of [['kill'], ['kill', 'pause'], ['redis_restart', 'sentinel_failover'], FAULT_KINDS] as const) {
    const plan = planFaults({ ...MIXED, kinds, rounds: kinds.length * 5 });
    t.same(
      plan.map((f) => f.round),
      plan.map((_, i) => i),
      'rounds in order',
    );
    t.ok(
      plan.every((f) => (kinds as readonly string[]).includes(f.kind)),
      `only ${kinds.join(', ')}`,
    );
    for (let block = 0; block < 5; block++) {
      const seen = plan.slice(block * kinds.length, (block + 1) * kinds.length).map((f) => f.kind);
      t.same([...seen].sort(), [...kinds].sort(), `block ${block} holds every kind once`);
    }
  }
});

t.test('kills and pauses hit members in range, and all of them over a long run; Redis faults no member', async (t) => {
  const plan = planFaults({ ...MIXED, rounds: 300, members: 5 });
  const hit = new Set<number>();
  for (const f of plan) {
    if (MEMBER_FAULTS.has(f.kind)) {
      t.ok(f.target !== null && Number.isInteger(f.target) && f.target >= 0 && f.target < 5, `target ${f.target}`);
      if (f.target !== null) hit.add(f.target);
    } else t.equal(f.target, null, `${f.kind} hits no member`);
  }
  t.same([...hit].sort(), [0, 1, 2, 3, 4], 'every member is hit at some point');
});

t.test('durations and offsets are the defaults, or within the ranges asked', async (t) => {
  for (const f of planFaults(MIXED)) {
    t.equal(f.durationMs, DEFAULT_DURATIONS[f.kind].min);
    t.equal(f.offsetMs, 2000);
  }
  const ranged = planFaults({
    ...MIXED,
    durations: { pause: { min: 1000, max: 25_000 } },
    offset: { min: 500, max: 3000 },
  });
  const pauses = ranged.filter((f) => f.kind === 'pause');
  t.ok(
    pauses.every((f) => f.durationMs >= 1000 && f.durationMs <= 25_000),
    'pauses within 1-25 s',
  );
  t.ok(new Set(pauses.map((f) => f.durationMs)).size > 1, 'and not all the same');
  t.ok(
    ranged.every((f) => f.offsetMs >= 500 && f.offsetMs <= 3000),
    'offsets within 0.5-3 s',
  );
});

t.test('failovers say how they are brought about; other faults do not', async (t) => {
  const plan = planFaults({ ...MIXED, kinds: ['sentinel_failover', 'cluster_failover', 'kill'], rounds: 60 });
  const ways = new Set(plan.filter((f) => f.kind !== 'kill').map((f) => f.way));
  t.same([...ways].sort(), ['command', 'kill'], 'by command and by kill -9');
  t.ok(
    plan.filter((f) => f.kind === 'kill').every((f) => f.way === null),
    'a kill has no way',
  );
});

t.test('options no run could follow are refused', async (t) => {
  t.throws(() => planFaults({ ...MIXED, kinds: [] }), RangeError);
  t.throws(() => planFaults({ ...MIXED, rounds: -1 }), RangeError);
  t.throws(() => planFaults({ ...MIXED, members: 0 }), RangeError);
  t.throws(() => planFaults({ ...MIXED, durations: { kill: { min: 5, max: 1 } } }), RangeError);
  t.same(planFaults({ ...MIXED, kinds: ['redis_restart'], members: 0 }).length, MIXED.rounds, 'no member needed');
});

t.test('kinds and durations as the benchmark reads them', async (t) => {
  t.same(parseKinds('kill, pause'), ['kill', 'pause']);
  t.throws(() => parseKinds('kill,reboot'), RangeError);
  t.same(parseDurations('kill:4000,pause:1000-9000'), {
    kill: { min: 4000, max: 4000 },
    pause: { min: 1000, max: 9000 },
  });
  t.throws(() => parseDurations('kill:soon'), RangeError);
});

t.test('a fault as the run’s table shows it: the rank of the member hit, or the way of a failover', async (t) => {
  const base = { round: 0, way: null, offsetMs: 2000, durationMs: 10_000 } as const;
  t.equal(describeFault({ ...base, kind: 'kill', target: 0 }), 'kill owner at +2s for 10s');
  t.equal(describeFault({ ...base, kind: 'pause', target: 2 }), 'pause other 2 at +2s for 10s');
  t.equal(
    describeFault({ ...base, kind: 'sentinel_failover', target: null, way: 'kill' }),
    'sentinel_failover (kill) at +2s for 10s',
  );
});
