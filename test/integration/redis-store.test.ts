// RedisStore against the shared contract, plus its key layout and its behaviour when Redis is away.
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import t from 'tap';
import { openStore } from '../../src/store/open-store.js';
import { RedisStore, RedisUnavailableError } from '../../src/store/redis-store.js';
import { testRedisUrl, uniquePrefix } from '../support/redis.js';
import { storeSuite } from './store.suite.js';

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

storeSuite(t, async () => {
  const prefix = uniquePrefix();
  const store = await RedisStore.connect(url, prefix);
  return {
    store,
    reopen: () => RedisStore.connect(url, prefix),
    cleanup: async () => {
      await store.close();
      await deleteUnder(prefix);
    },
  };
});

t.test('each collection is one hash and the registry lists every collection', async (t) => {
  const prefix = uniquePrefix();
  t.teardown(() => deleteUnder(prefix));
  const store = await RedisStore.connect(url, prefix);
  t.teardown(() => store.close());
  await store.put('org/acme/clients', 'c1', { k: 1 });
  await store.putMany('org/acme/nodes', [
    ['n1', { s: 1 }],
    ['n2', { s: 2 }],
  ]);
  t.same(await keysUnder(prefix), [
    `${prefix}c:org/acme/clients`,
    `${prefix}c:org/acme/nodes`,
    `${prefix}collections`,
    `${prefix}marker`,
  ]);
  t.same(await admin.hgetall(`${prefix}c:org/acme/nodes`), { n1: '{"s":1}', n2: '{"s":2}' });
  t.same((await admin.smembers(`${prefix}collections`)).sort(), ['org/acme/clients', 'org/acme/nodes']);
  await store.drop('org');
  t.same(await keysUnder(prefix), [`${prefix}marker`], 'dropping the top collection leaves no key but the marker');
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
  const away = new RedisStore(`redis://127.0.0.1:${port}`, uniquePrefix());
  t.teardown(() => away.close());
  t.equal(await away.state(), 'unavailable');
  const store = await RedisStore.connect(url, uniquePrefix());
  t.equal(await store.state(), 'ok');
  await store.close();
  t.equal(await store.state(), 'unavailable');
});

t.test('openStore with a Redis URL opens a Redis store', async (t) => {
  const store = await openStore({ redis_url: url, data_dir: '/nonexistent' });
  t.teardown(() => store.close());
  t.equal(store.kind, 'redis');
  t.equal(await store.state(), 'ok');
});
