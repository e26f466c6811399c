// The dashboard's sign-ins in Redis, when Redis does not answer: a page waits at most store_timeout for it, then
// says the store cannot be reached (503) rather than hang or sign anyone out. The bound runs on a manual clock,
// over a Redis that never answers.
import t from 'tap';
import { RedisSessions, RedisSignInThrottle } from '../../src/http/ui/redis-sign-ins.js';
import { newToken } from '../../src/http/ui/sessions.js';
import { PageError } from '../../src/http/ui/ui-env.js';
import type { RedisClient } from '../../src/store/redis-scripts.js';
import { ManualClock } from '../support/manual-clock.js';

const TIMEOUT_MS = 2000;

/** A Redis whose every command waits for ever. */
function silentRedis(): RedisClient {
  const never = () => new Promise<never>(() => undefined);
  return {
    getex: never,
    set: never,
    del: never,
    pttl: never,
    defineCommand: () => undefined,
  } as unknown as RedisClient;
}

/** What `call` came to so far: 'pending', or what it rejected with. */
function outcomeOf(call: Promise<unknown>): { value: unknown } {
  const outcome: { value: unknown } = { value: 'pending' };
  void call.then(
    () => (outcome.value = 'answered'),
    (e: unknown) => (outcome.value = e),
  );
  return outcome;
}

t.test('a session read waits store_timeout for Redis, then makes a 503 page', async (t) => {
  const clock = new ManualClock();
  const options = { keyPrefix: 'infra:', sessionMs: 60_000, timeoutMs: TIMEOUT_MS, now: () => 0, timers: clock };
  const sessions = new RedisSessions(silentRedis(), options);
  const use = outcomeOf(sessions.use(newToken()));
  await clock.advance(TIMEOUT_MS - 1);
  t.equal(use.value, 'pending', 'still waited for just before store_timeout');
  await clock.advance(1);
  t.ok(use.value instanceof PageError && use.value.status === 503, 'a 503 page at store_timeout');
});

t.test("the sign-in throttle's reads are bounded the same way", async (t) => {
  const clock = new ManualClock();
  const throttle = new RedisSignInThrottle(silentRedis(), {
    keyPrefix: 'infra:',
    timeoutMs: TIMEOUT_MS,
    timers: clock,
  });
  const wait = outcomeOf(throttle.waitMs('olga', '10.0.0.1'));
  await clock.advance(TIMEOUT_MS - 1);
  t.equal(wait.value, 'pending');
  await clock.advance(1);
  t.ok(wait.value instanceof PageError && wait.value.status === 503);
});
