// The members' registrations on a real Redis, judged by Redis's clock: a member silent past its time to live while
// the others renew is gone, and hears on its next renewal that it had lapsed; when Redis heard no member at all for
// half the time to live (Redis failed over, paused or cut off), the registrations run on by that silence, so none is
// judged gone for Redis's absence, while one that ran out before the silence stays gone. A member asking whether a
// lease's holder is alive, to take the lease, counts the silence the same way even before any renewal ran.
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { Leases } from '../../src/cluster/leases.js';
import { Members, type Member } from '../../src/cluster/members.js';
import { epochKey, leaseKey, memberExpiryKey, memberHeardKey, membersKey } from '../../src/store/layout.js';
import { withScripts } from '../../src/store/redis-scripts.js';
import { testRedisUrl, uniquePrefix } from '../support/redis.js';

const TTL_MS = 3000;
const PARTITION = 7;

interface Registered {
  members: Members;
  /** Whether each renewal found the registration lapsed, in order. */
  lapses: boolean[];
}

async function cluster(t: Test, ids: string[]) {
  const redis = new Redis(await testRedisUrl());
  const prefix = uniquePrefix();
  t.teardown(async () => {
    await redis.del(membersKey(prefix), memberExpiryKey(prefix), memberHeardKey(prefix));
    await redis.del(leaseKey(prefix, PARTITION), epochKey(prefix, PARTITION));
    await redis.quit();
  });
  const scripted = withScripts(redis);
  const registered = new Map<string, Registered>();
  for (const id of ids) {
    const lapses: boolean[] = [];
    const me: Member = { id, url: `http://${id}`, host: 'h', pid: 1, started_at: 0 };
    const members = new Members(scripted, prefix, me, TTL_MS, undefined, (_sent, lapsed) => void lapses.push(lapsed));
    registered.set(id, { members, lapses });
  }
  const at = (id: string) => registered.get(id) as Registered;
  /** Redis's clock, ms. */
  const now = async () => {
    const [s, us] = await redis.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };
  /** Sets when a member's registration runs out. */
  const expires = (id: string, when: number) => redis.zadd(memberExpiryKey(prefix), when, id);
  /** Sets when Redis last heard any member. */
  const heard = (when: number) => redis.set(memberHeardKey(prefix), when);
  const expiry = async (id: string) => Number(await redis.zscore(memberExpiryKey(prefix), id));
  /** Renews a member's registration; answers the ids of the live members. */
  const beat = async (id: string) => (await at(id).members.beat()).map((m) => m.id);
  /** Whether `id` takes the lease of PARTITION (another member's, unless that one is alive). */
  const take = (id: string) => new Leases(scripted, prefix, id, { ttlMs: TTL_MS }).acquire(PARTITION);
  return { at, now, expires, heard, expiry, beat, take, prefix, redis: scripted };
}

t.test('a member silent past its time to live while the others renew is gone, and hears it lapsed', async (t) => {
  const c = await cluster(t, ['a', 'b']);
  await c.beat('a');
  t.same(await c.beat('b'), ['a', 'b']);
  // a stopped renewing a time to live ago; b kept on, so Redis was there all along.
  await c.expires('a', (await c.now()) - 1);
  t.same(await c.beat('b'), ['b'], 'b no longer counts a');
  t.same(await c.beat('a'), ['a', 'b'], 'a registers again');
  // (A first registration finds none before it: it counts as lapsed too.)
  t.same(c.at('a').lapses, [true, true], 'and hears that its registration had lapsed');
  t.same(c.at('b').lapses, [true, false]);
});

t.test('no member heard for half the time to live: none is judged gone for Redis’s absence', async (t) => {
  const c = await cluster(t, ['a', 'b', 'c']);
  await c.beat('c');
  await c.beat('a');
  t.same(await c.beat('b'), ['a', 'b', 'c']);
  // Redis heard nobody for 2 s (a failover whose last writes went to the replaced master), and both registrations
  // ran out meanwhile; c's had run out before the silence began.
  const now = await c.now();
  await c.heard(now - 2000);
  await c.expires('a', now - 500);
  await c.expires('b', now - 100);
  await c.expires('c', now - 2500);
  t.same(await c.beat('b'), ['a', 'b'], 'a is still a member; c, gone before the silence, is not');
  t.ok((await c.expiry('a')) > now, 'a’s registration runs on by the silence');
  t.same(await c.beat('a'), ['a', 'b']);
  t.same(c.at('a').lapses, [true, false], 'neither registration counts as lapsed after the silence');
  t.same(c.at('b').lapses, [true, false]);
});

t.test('a shorter silence is a member’s own: its registration that ran out has lapsed', async (t) => {
  const c = await cluster(t, ['a', 'b']);
  await c.beat('a');
  await c.beat('b');
  const now = await c.now();
  await c.heard(now - 1000);
  await c.expires('a', now - 1);
  t.same(await c.beat('b'), ['b']);
  t.ok((await c.expiry('b')) <= now + TTL_MS + 100, 'b’s registration runs a time to live from now, no more');
});

t.test('right after a silence, before any renewal, a lease’s holder is not judged gone', async (t) => {
  const c = await cluster(t, ['a', 'b']);
  await c.beat('a');
  await c.beat('b');
  t.equal(await c.take('a'), true, 'a holds the lease');
  const now = await c.now();
  // Redis was away for 2 s and has just come back: no member has renewed since, and a's registration ran out in
  // the silence.
  await c.heard(now - 2000);
  await c.expires('a', now - 500);
  t.equal(await c.take('b'), false, 'b does not take a’s lease for Redis’s absence');
  // The same registration run out with members heard all along: a is gone, and its lease is b's to take.
  await c.heard(now);
  t.equal(await c.take('b'), true, 'b takes the lease of a member that is gone');
});

t.test(
  'a lease naming a live member that does not hold it is let go, and the member that should own it takes it',
  async (t) => {
    const c = await cluster(t, ['a', 'b']);
    await c.beat('a');
    await c.beat('b');
    const { redis } = c;
    // a let its lease go while Redis was away (or a failover undid the release): the key still names it.
    await redis.set(leaseKey(c.prefix, PARTITION), '5:a');
    t.equal(await c.take('b'), false, 'b does not take a lease of a live member');
    const a = new Leases(redis, c.prefix, 'a', { ttlMs: TTL_MS });
    t.same(await a.repair(), [PARTITION], 'a lets go the lease it does not hold');
    t.equal(await c.take('b'), true, 'and b takes it');
    t.same(await a.repair(), [], 'b’s lease is not a’s to let go');
    t.equal((await redis.get(leaseKey(c.prefix, PARTITION)))?.endsWith(':b'), true, 'b holds it still');
  },
);

t.test('with a registration per partition, a lease’s holder is alive by its registration there alone', async (t) => {
  const c = await cluster(t, ['a', 'b']);
  const { redis } = c;
  t.teardown(() => redis.del(memberExpiryKey(c.prefix, PARTITION), memberHeardKey(c.prefix, PARTITION)));
  const perPartition = (id: string) =>
    new Leases(redis, c.prefix, id, { ttlMs: TTL_MS, registrationPerPartition: true });
  const a = perPartition('a');
  t.equal(await a.acquire(PARTITION), true, 'a takes the lease, registered in the partition’s slot as it does');
  // a never registered in the global slot (its master is away, say): b still finds a alive where it matters.
  t.equal(await perPartition('b').acquire(PARTITION), false, 'b does not take it');
  await a.beat();
  t.ok(a.tokenFor(PARTITION), 'a’s renewal there keeps the lease good');
  await redis.zadd(memberExpiryKey(c.prefix, PARTITION), 0, 'a'); // a's registration there ran out
  t.equal(await perPartition('b').acquire(PARTITION), true, 'once it runs out there, b takes the lease');
});
