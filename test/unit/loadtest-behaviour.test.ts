// Behaviours as shares of the fleet: exact counts, the same for the same seed, independent draws.
import t from 'tap';
import { assignBehaviours, seededRandom, type NodeBehaviour } from '../../src/loadtest/behaviour.js';
import type { BehaviourShares } from '../../src/loadtest/options.js';

const shares = (s: Partial<BehaviourShares>): BehaviourShares => ({
  nack: 0,
  silent: 0,
  crash: 0,
  fail: 0,
  flap: 0,
  slowVoteMs: 0,
  runMs: 0,
  lateHeartbeats: false,
  ...s,
});
const count = (bs: NodeBehaviour[], p: (b: NodeBehaviour) => boolean) => bs.filter(p).length;

t.test('each share becomes an exact count of the fleet', async (t) => {
  const bs = assignBehaviours(200, shares({ nack: 0.1, silent: 0.05, crash: 0.02, fail: 0.25, flap: 0.5 }), 7);
  t.equal(bs.length, 200);
  t.equal(
    count(bs, (b) => b.vote === 'nack'),
    20,
  );
  t.equal(
    count(bs, (b) => b.vote === 'silent'),
    10,
  );
  t.equal(
    count(bs, (b) => b.vote === 'ack'),
    170,
  );
  t.equal(
    count(bs, (b) => b.run === 'crash'),
    4,
  );
  t.equal(
    count(bs, (b) => b.run === 'fail'),
    50,
  );
  t.equal(
    count(bs, (b) => b.flap),
    100,
  );
});

t.test('the same seed gives the same assignment, another seed another one', async (t) => {
  const s = shares({ nack: 0.3, flap: 0.3 });
  t.same(assignBehaviours(100, s, 42), assignBehaviours(100, s, 42));
  t.not(JSON.stringify(assignBehaviours(100, s, 42)), JSON.stringify(assignBehaviours(100, s, 43)));
});

t.test('votes and flapping are drawn apart: flapping nodes are not just the nacking ones', async (t) => {
  const bs = assignBehaviours(1000, shares({ nack: 0.5, flap: 0.5 }), 3);
  const both = count(bs, (b) => b.vote === 'nack' && b.flap);
  t.ok(both > 150 && both < 350, `about a quarter nack and flap (${both})`);
});

t.test('no shares: every node acks and succeeds', async (t) => {
  t.same(
    new Set(assignBehaviours(30, shares({}), 1).map((b) => JSON.stringify(b))),
    new Set(['{"vote":"ack","run":"succeed","flap":false}']),
  );
});

t.test('the generator stays in [0, 1) and spreads', async (t) => {
  const r = seededRandom(9);
  const values = Array.from({ length: 10_000 }, r);
  t.ok(values.every((v) => v >= 0 && v < 1));
  const low = values.filter((v) => v < 0.5).length;
  t.ok(low > 4700 && low < 5300, `half below 0.5 (${low})`);
});
