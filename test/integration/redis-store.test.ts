// RedisStore against the shared contract, plus its key layout and its behaviour when Redis is away.
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import t from 'tap';
import { openStore } from '../../src/store/open-store.js';
import { RedisStore, RedisUnavailableError } from '../../src/store/redis-store.js';
import { testRedisUrl, uniquePrefix } from '../support/redis.js';
import { storeSuite } from './store.suite.js';
import { holdEveryPartition, Leases } from '../../src/cluster/leases.js';
import { FencedError } from '../../src/store/fencing.js';
import { partitionOf, type Partition } from '../../src/store/partitions.js';
import { until } from '../support/deadline.js';
import { markerKey } from '../../src/store/layout.js';
import { ManualClock } from '../support/manual-clock.js';

const url = await testRedisUrl();
const admin = new Redis(url);
t.teardown(() => admin.quit());

async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of admin.scanStream({ match: `${prefix}*`, count: 1000 })) {
    keys.push(...(batch as string[]));
  }
  return keys.sort();
}

async function deleteUnder(prefix: string): Promise<void> {
  const keys = await keysUnder(prefix);
  if (keys.length > 0) await admin.del(...keys);
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

/** A store that holds every partition's lease, as a server running alone does. */
async function fencedStore(
  prefix: string,
): Promise<{ store: RedisStore; reopen: () => Promise<RedisStore>; close: () => Promise<void> }> {
  const store = await RedisStore.connect(url, prefix);
  const leases = await holdEveryPartition(store);
  return {
    store,
    // The same process opening the store again: it writes under the leases it holds.
    reopen: async () => {
      const again = await RedisStore.connect(url, prefix);
      again.fenceWith(leases);
      return again;
    },
    close: async () => {
      await leases.stop(true);
      await store.close();
    },
  };
}

storeSuite(t, async () => {
  const prefix = uniquePrefix();
  const { store, reopen, close } = await fencedStore(prefix);
  return {
    store,
    reopen,
    cleanup: async () => {
      await close();
      await deleteUnder(prefix);
    },
  };
});

t.test("an organization's collections are hashes under its partition's hash tag", async (t) => {
  const prefix = uniquePrefix();
  t.teardown(() => deleteUnder(prefix));
  const { store, close } = await fencedStore(prefix);
  t.teardown(close);
  await store.put('org/acme/clients', 'c1', { k: 1 });
  await store.putMany('org/acme/nodes', [
    ['n1', { s: 1 }],
    ['n2', { s: 2 }],
  ]);
  await store.put('orgs', 'acme', { name: 'acme' });
  await store.put('users', 'alice', { name: 'alice' });
  const tag = `{p${partitionOf('acme')}}`;
  const data = (await keysUnder(prefix)).filter((k) => !k.endsWith(':lease') && !k.endsWith(':epoch'));
  t.same(
    data,
    [
      `${prefix}${tag}:c:org/acme/clients`,
      `${prefix}${tag}:c:org/acme/nodes`,
      `${prefix}${tag}:c:orgs`,
      `${prefix}${tag}:collections`,
      `${prefix}{g}:c:users`,
      `${prefix}{g}:collections`,
      `${prefix}{g}:layout`,
      `${prefix}{g}:marker`,
    ].sort(),
  );
  t.same(await admin.hgetall(`${prefix}${tag}:c:org/acme/nodes`), { n1: '{"s":1}', n2: '{"s":2}' });
  t.same((await admin.smembers(`${prefix}${tag}:collections`)).sort(), ['org/acme/clients', 'org/acme/nodes', 'orgs']);
  await store.drop('org');
  await store.drop('orgs');
  t.same(
    (await keysUnder(prefix)).filter((k) => k.includes(tag) && !k.endsWith(':lease') && !k.endsWith(':epoch')),
    [],
    "dropping an organization's collections leaves none of its keys",
  );
});

t.test('a write under a lease another process took is refused whole, and the loser hears of it', async (t) => {
  const prefix = uniquePrefix();
  t.teardown(() => deleteUnder(prefix));
  const store = await RedisStore.connect(url, prefix);
  t.teardown(() => store.close());
  const p = partitionOf('acme');
  let lost: Partition | undefined;
  const old = new Leases(store.redis, prefix, 'old', { ttlMs: 60_000, events: { lost: (q) => (lost = q) } });
  t.ok(await old.acquire(p));
  store.fenceWith(old);
  await store.put('org/acme/nodes', 'n1', { v: 'old' });
  // Another process takes the partition (its lease ran out while the old owner was paused).
  await admin.del(`${prefix}{p${p}}:lease`);
  const next = new Leases(store.redis, prefix, 'next');
  t.ok(await next.acquire(p));
  t.ok((next.epochOf(p) ?? 0) > (old.epochOf(p) ?? 0), 'the new lease has a higher epoch');
  const refused = await store
    .apply([
      { collection: 'org/acme/nodes', id: 'n1', doc: { v: 'stale' } },
      { collection: 'org/acme/nodes', id: 'n2', doc: { v: 'stale' } },
    ])
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  t.type(refused, FencedError);
  t.same(await admin.hgetall(`${prefix}{p${p}}:c:org/acme/nodes`), { n1: '{"v":"old"}' }, 'nothing of it landed');
  await until('the old owner learns it lost the partition', () => (lost === p ? true : undefined), 5000);
  t.equal(old.tokenFor(p), undefined);
  await t.rejects(store.put('org/acme/nodes', 'n3', {}), FencedError, 'and writes nothing more');
});

t.test('a lease that ran out with nobody taking it comes back to its holder at the next renewal', async (t) => {
  const prefix = uniquePrefix();
  t.teardown(() => deleteUnder(prefix));
  const store = await RedisStore.connect(url, prefix);
  t.teardown(() => store.close());
  let clock = 0;
  const leases = new Leases(store.redis, prefix, 'paused', { ttlMs: 60_000, now: () => clock });
  t.ok(await leases.acquire('global'));
  store.fenceWith(leases);
  clock = 60_000; // paused past its lease
  await admin.del(`${prefix}{g}:lease`);
  await t.rejects(store.put('users', 'a', {}), FencedError, 'a holder past its lease writes nothing');
  await leases.renew();
  t.ok(leases.tokenFor('global'), 'the same epoch is renewed: nobody else could have written');
  await store.put('users', 'a', { ok: true });
  t.same(await store.get('users', 'a'), { ok: true });
});

t.test('after Redis lost the data, the lease is taken again with a higher epoch', async (t) => {
  const prefix = uniquePrefix();
  t.teardown(() => deleteUnder(prefix));
  const store = await RedisStore.connect(url, prefix);
  t.teardown(() => store.close());
  let lostData: readonly Partition[] = [];
  const leases = new Leases(store.redis, prefix, 'm', { events: { dataLost: (ps) => (lostData = ps) } });
  t.ok(await leases.acquire(3));
  const before = leases.epochOf(3) ?? Infinity;
  await admin.del(`${prefix}{p3}:lease`, `${prefix}{p3}:epoch`);
  await leases.renew();
  t.same(lostData, [3]);
  t.ok((leases.epochOf(3) ?? 0) > before, 'epochs never go back, even when Redis lost its counter');
});

t.test('data lost without a reconnect is found by the look every 5 s, and written back', async (t) => {
  const prefix = uniquePrefix();
  t.teardown(() => deleteUnder(prefix));
  const clock = new ManualClock();
  const store = await RedisStore.connect(url, prefix, undefined, undefined, clock);
  t.teardown(() => store.close());
  let writeBacks = 0;
  const wroteBack = new Promise<void>((resolve) =>
    store.onLost(async () => {
      writeBacks += 1;
      resolve();
    }),
  );
  // What a FLUSHALL does to this store, on a Redis other tests share.
  await admin.del(markerKey(prefix));
  await clock.advance(4999);
  t.equal(writeBacks, 0, 'not looked for before 5 s');
  await clock.advance(1);
  await wroteBack;
  t.equal(writeBacks, 1, 'found at 5 s, and written back');
  await until('the marker written again', async () => (await admin.exists(markerKey(prefix))) === 1 || undefined, 5000);
  t.pass('the marker is written again after the write-back');
});

t.test('a large batch of fields is written in one fenced script', async (t) => {
  const prefix = uniquePrefix();
  t.teardown(() => deleteUnder(prefix));
  const { store, close } = await fencedStore(prefix);
  t.teardown(close);
  const fields = Array.from({ length: 120_000 }, (_, i) => [`node-${i}`, { status: 'up', i }] as const);
  await store.putFields('org/big/node_states', 'all', fields);
  const back = await store.getFields('org/big/node_states', 'all');
  t.equal(back.size, 120_000);
  t.same(back.get('node-119999'), { status: 'up', i: 119_999 });
});

t.test('a store written in the layout without hash tags is moved into partitions at connect', async (t) => {
  const prefix = uniquePrefix();
  t.teardown(() => deleteUnder(prefix));
  await admin.sadd(`${prefix}collections`, 'orgs', 'org/acme/nodes', 'org/acme/jobs', 'users');
  await admin.hset(`${prefix}c:orgs`, 'acme', '{"name":"acme"}', 'zeta', '{"name":"zeta"}');
  await admin.hset(`${prefix}c:org/acme/nodes`, 'n1', '{"n":1}');
  await admin.hset(`${prefix}c:users`, 'alice', '{"u":1}');
  await admin.sadd(`${prefix}fm:org/acme/jobs`, 'j1');
  await admin.hset(`${prefix}f:org/acme/jobs:j1`, 'n1', '{"status":"running"}');
  await admin.set(`${prefix}marker`, 'written by infra-server');
  const store = await RedisStore.connect(url, prefix);
  t.teardown(() => store.close());
  t.same(await store.get('orgs', 'acme'), { name: 'acme' });
  t.same([...(await store.load('orgs')).keys()].sort(), ['acme', 'zeta']);
  t.same(await store.get('org/acme/nodes', 'n1'), { n: 1 });
  t.same(await store.get('users', 'alice'), { u: 1 });
  t.same([...(await store.getFields('org/acme/jobs', 'j1'))], [['n1', { status: 'running' }]]);
  const left = (await keysUnder(prefix)).filter((k) => !k.includes('{'));
  t.same(left, [], 'no key of the old layout is left');
  t.equal(await admin.get(`${prefix}{g}:layout`), '2');
  const again = await RedisStore.connect(url, prefix);
  t.same(await again.get('org/acme/nodes', 'n1'), { n: 1 }, 'a second start finds the layout current');
  await again.close();
});

t.test('connect rejects with a clear message when Redis does not answer', async (t) => {
  const port = await closedPort();
  const failure = await RedisStore.connect(`redis://:hunter2@127.0.0.1:${port}`, uniquePrefix(), 300).then(
    (store) => store.close(),
    (err: unknown) => err,
  );
  t.type(failure, RedisUnavailableError);
  const message = failure instanceof Error ? failure.message : '';
  t.match(message, `127.0.0.1:${port}`);
  t.match(message, 'did not answer within 0.3 s');
  t.notMatch(message, 'hunter2', 'the password is not shown');
});

t.test('state is unavailable when Redis cannot be reached or the store is closed', async (t) => {
  const port = await closedPort();
  const away = RedisStore.openLazily(`redis://127.0.0.1:${port}`, uniquePrefix());
  t.teardown(() => away.close());
  t.equal(await away.state(), 'unavailable');
  const store = await RedisStore.connect(url, uniquePrefix());
  t.equal(await store.state(), 'ok');
  await store.close();
  t.equal(await store.state(), 'unavailable');
});

t.test('openStore with a Redis URL opens a Redis store', async (t) => {
  const store = await openStore({ redis_url: url, data_dir: '/nonexistent', store_timeout: 2 });
  t.teardown(() => store.close());
  t.equal(store.kind, 'redis');
  t.equal(await store.state(), 'ok');
});
