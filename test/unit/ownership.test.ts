// Which member owns which partition: rendezvous hashing over the live members, the same plan on every member, a free
// partition taken at once by the member that should own it, and hand-overs held back for members that just came back
// and spread over several plans.
import t from 'tap';
import { planOwnership, preferredOwner } from '../../src/cluster/ownership.js';
import { ALL_PARTITIONS, type Partition } from '../../src/store/partitions.js';

const members = ['a', 'b', 'c'];
const ownedBy = (id: string, among = members): Partition[] =>
  ALL_PARTITIONS.filter((p) => preferredOwner(p, among) === id);

t.test('every partition has one preferred owner, and a member leaving moves only its own', async (t) => {
  const shares = members.map((m) => ownedBy(m).length);
  t.equal(
    shares.reduce((a, b) => a + b, 0),
    ALL_PARTITIONS.length,
    'each partition once',
  );
  t.ok(
    shares.every((n) => n > 10),
    `spread over the three (${shares.join(', ')})`,
  );
  const withoutC = members.filter((m) => m !== 'c');
  for (const p of ownedBy('a')) t.equal(preferredOwner(p, withoutC), 'a', `c leaving leaves ${String(p)} with a`);
});

t.test('a free partition is taken at once by the member that should own it, however new', async (t) => {
  const plan = planOwnership('c', new Set(), members, { settled: new Set(['a', 'b']), maxReleases: 8 });
  t.same(plan.acquire, ownedBy('c'), 'c takes its share of what nobody holds');
});

t.test('a member that just came back is handed nothing until it has stayed', async (t) => {
  // a held everything while c was away (b and c were gone); c is live again, not yet settled.
  const held = new Set(ALL_PARTITIONS.filter((p) => preferredOwner(p, members) !== 'b'));
  const early = planOwnership('a', held, members, { settled: new Set(['a', 'b']), maxReleases: Infinity });
  t.same(early.release, [], 'nothing goes to c yet');
  const later = planOwnership('a', held, members, { settled: new Set(members), maxReleases: Infinity });
  t.same(later.release, ownedBy('c'), 'once c has stayed, its share goes to it');
});

t.test('a large hand-over is spread over several plans', async (t) => {
  const held = new Set(ALL_PARTITIONS);
  const plan = planOwnership('a', held, members, { settled: new Set(members), maxReleases: 8 });
  t.equal(plan.release.length, 8, 'eight a plan');
  const rest = new Set([...held].filter((p) => !plan.release.includes(p)));
  const next = planOwnership('a', rest, members, { settled: new Set(members), maxReleases: 8 });
  t.equal(next.release.length, 8, 'then the next eight');
  t.same(
    next.release.filter((p) => plan.release.includes(p)),
    [],
    'none twice',
  );
});
