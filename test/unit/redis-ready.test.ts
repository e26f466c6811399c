// Waiting for Redis at start: the connection is given store_timeout to become ready, then dropped with an error
// that names the URL (its password hidden) and the last connection error; one that becomes ready in time is taken.
// The wait runs on a manual clock, over a connection whose events the test raises.
import { EventEmitter } from 'node:events';
import t from 'tap';
import { RedisUnavailableError, whenReady, type OpenedRedis } from '../../src/store/redis-connection.js';
import { ManualClock } from '../support/manual-clock.js';

const URL = 'redis://:hunter2@redis.example:6379';

/** A connection still connecting, as openRedis returns it, with the last error it met. */
function connecting(lastError?: Error) {
  const redis = Object.assign(new EventEmitter(), {
    status: 'connecting',
    disconnected: 0,
    disconnect() {
      redis.disconnected += 1;
    },
  });
  const opened = { redis, mode: 'single', lastError: () => lastError } as unknown as OpenedRedis;
  return { redis, opened };
}

t.test('a Redis not ready within the timeout is given up then, naming the URL and the last error', async (t) => {
  const clock = new ManualClock();
  const { redis, opened } = connecting(new Error('ECONNREFUSED'));
  let outcome: unknown = 'pending';
  void whenReady(opened, URL, 5000, clock).then(
    () => (outcome = 'ready'),
    (e: unknown) => (outcome = e),
  );
  await clock.advance(4999);
  t.equal(outcome, 'pending', 'still waited for just before the timeout');
  await clock.advance(1);
  t.ok(outcome instanceof RedisUnavailableError);
  t.equal(
    (outcome as Error).message,
    'Redis at redis://:***@redis.example:6379 did not answer within 5 s (ECONNREFUSED)',
    'the message hides the password',
  );
  t.equal(redis.disconnected, 1, 'the connection attempt is dropped');
  t.equal(redis.listenerCount('ready'), 0, 'and no longer listened to');
});

t.test('a Redis ready in time is taken, and the timeout cancelled', async (t) => {
  const clock = new ManualClock();
  const { redis, opened } = connecting();
  const ready = whenReady(opened, URL, 5000, clock);
  await clock.advance(4000);
  redis.emit('ready');
  await ready;
  t.equal(clock.pending, 0, 'no timer is left');
  t.equal(redis.disconnected, 0);
});
