// Dashboard sign-ins kept in a real Redis, as a cluster keeps them: two processes on one key prefix (two
// connections here) see each other's sessions and count each other's failed sign-ins; sessions lapse by their
// time to live unless used; Redis holds a session's hash, never its id; and a Redis that cannot answer makes a 503
// page, not a sign-out.
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { RedisSessions, RedisSignInThrottle, type RedisSignInOptions } from '../../src/http/ui/redis-sign-ins.js';
import { sessionDigest } from '../../src/http/ui/sessions.js';
import { PageError } from '../../src/http/ui/ui-env.js';
import { signInKeys, uiSessionKey } from '../../src/store/layout.js';
import { until } from '../support/deadline.js';
import { testRedisUrl, uniquePrefix } from '../support/redis.js';

const WAIT_MS = 10_000;

/** One process's connection to the test Redis, closed at teardown. */
async function connection(t: Test): Promise<Redis> {
  const redis = new Redis(await testRedisUrl());
  t.teardown(async () => {
    await redis.quit();
  });
  return redis;
}

function options(keyPrefix: string, sessionMs = 60_000): RedisSignInOptions {
  return { keyPrefix, sessionMs, timeoutMs: 5000, now: Date.now };
}

async function removeKeys(redis: Redis, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
}

t.test('a sign-in made through one process opens pages on another; a sign-out anywhere ends it', async (t) => {
  const prefix = uniquePrefix();
  const [a, b] = [await connection(t), await connection(t)];
  t.teardown(() => removeKeys(a, prefix));
  const here = new RedisSessions(a, options(prefix));
  const there = new RedisSessions(b, options(prefix));
  const elsewhere = new RedisSessions(b, options(uniquePrefix()));

  const session = await here.create('olga');
  t.match(await there.use(session.id), { id: session.id, username: 'olga', csrf: session.csrf }, 'seen by the other');
  t.equal(await elsewhere.use(session.id), undefined, 'not by a server on another prefix');
  t.equal(await there.use('x'.repeat(43)), undefined, 'an unknown id opens nothing');
  t.equal(await there.use('not a token'), undefined, 'nor a malformed one');
  t.equal(await there.use(undefined), undefined);

  const keys = await a.keys(`${prefix}*`);
  t.same(keys, [uiSessionKey(prefix, sessionDigest(session.id))], 'one key, in the global slot, named by the hash');
  t.match(keys[0], /\{g\}:ui:session:/);
  t.notMatch(keys.join(' '), session.id, 'the id is not in the key');
  t.notMatch((await a.get(keys[0] ?? '')) ?? '', session.id, 'nor in the value');

  const other = await here.create('olga');
  await there.drop(session.id);
  t.equal(await here.use(session.id), undefined, 'signed out through one process, signed out on the other');
  t.equal((await here.use(other.id))?.username, 'olga', 'her other sign-in stays');
});

t.test('a session lapses by its time to live, and each request pushes the lapse back', async (t) => {
  const prefix = uniquePrefix();
  const [a, b] = [await connection(t), await connection(t)];
  t.teardown(() => removeKeys(a, prefix));
  const sessionMs = 1500;
  const here = new RedisSessions(a, options(prefix, sessionMs));
  const there = new RedisSessions(b, options(prefix, sessionMs));
  const kept = await here.create('rick');
  const left = await here.create('rick');
  const keyOf = (id: string) => uiSessionKey(prefix, sessionDigest(id));

  await until(
    'the session to be half spent',
    async () => ((await a.pttl(keyOf(kept.id))) < 700 ? true : undefined),
    WAIT_MS,
    20,
  );
  t.ok(await there.use(kept.id), 'used before it lapsed');
  t.ok((await a.pttl(keyOf(kept.id))) > 700, 'its time to live starts again');
  await until(
    'the unused session to lapse',
    async () => ((await a.exists(keyOf(left.id))) === 0 ? true : undefined),
    WAIT_MS,
    20,
  );
  t.equal(await there.use(left.id), undefined, 'a lapsed session opens nothing');
});

t.test('failed sign-ins through one process count on the other', async (t) => {
  const prefix = uniquePrefix();
  const [a, b] = [await connection(t), await connection(t)];
  t.teardown(() => removeKeys(a, prefix));
  const here = new RedisSignInThrottle(a, options(prefix));
  const there = new RedisSignInThrottle(b, options(prefix));

  for (let i = 0; i < 4; i++) await (i % 2 === 0 ? here : there).failed('wanda', '10.0.0.1');
  t.equal(await here.waitMs('wanda', '10.0.0.1'), 0, 'four failures between them: no wait');
  await there.failed('wanda', '10.0.0.1');
  const first = await here.waitMs('wanda', '10.0.0.9');
  t.ok(first > 0 && first <= 1000, `the fifth, through the other process: about a second (${first} ms), any address`);
  t.equal(await here.waitMs('olga', '10.0.0.1'), 0, 'other names are not held back');
  await here.failed('wanda', '10.0.0.1');
  const second = await there.waitMs('wanda', '10.0.0.1');
  t.ok(second > 1000 && second <= 2000, `the sixth: about two seconds (${second} ms)`);
  const remembered = await a.pttl(signInKeys(prefix, 'user:wanda').failures);
  t.ok(remembered > 14 * 60_000, `the count lives as long as failures are remembered (${remembered} ms)`);

  await until(
    'the wait to run out',
    async () => ((await there.waitMs('wanda', '10.0.0.1')) === 0 ? true : undefined),
    WAIT_MS,
  );
  await there.succeeded('wanda');
  await here.failed('wanda', '10.0.0.1');
  t.equal(await here.waitMs('wanda', '10.0.0.1'), 0, 'a right password through one process clears the count on both');

  for (let i = 1; i <= 20; i++) await (i % 2 === 0 ? here : there).failed(`nobody-${i}`, '10.0.0.7');
  t.ok((await here.waitMs('rick', '10.0.0.7')) > 0, 'twenty failures from one address, shared: every name waits there');
  t.equal(await there.waitMs('rick', '10.0.0.8'), 0, 'not from another address');
});

t.test('a Redis that does not answer makes a 503 page, not a sign-out', async (t) => {
  // Nothing listens on port 1; without an offline queue every command fails at once, as the store's connection does.
  const gone = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
  t.teardown(() => gone.disconnect());
  const sessions = new RedisSessions(gone, options(uniquePrefix()));
  const throttle = new RedisSignInThrottle(gone, options(uniquePrefix()));
  for (const [what, call] of [
    ['use', () => sessions.use('x'.repeat(43))],
    ['create', () => sessions.create('olga')],
    ['waitMs', () => throttle.waitMs('olga', '10.0.0.1')],
    ['failed', () => throttle.failed('olga', '10.0.0.1')],
  ] as const) {
    const failed = await (call() as Promise<unknown>).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(failed instanceof PageError && failed.status === 503, `${what}: 503`);
  }
});
