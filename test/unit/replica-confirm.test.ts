// When a write counts as stored through Sentinel (redis_min_replicas): once WAIT says enough replicas hold it, and
// no failover was announced since it was sent, nor runs now; while one runs, WAIT is not even asked. A fake WAIT
// and fake announcements: the real ones are in test/e2e/redis-sentinel.test.ts.
import t from 'tap';
import { NotReplicatedError, waitForReplicas } from '../../src/store/redis-replication.js';
import type { RedisClient } from '../../src/store/redis-scripts.js';
import type { Failovers } from '../../src/store/sentinel-failovers.js';

function setup(held: number) {
  const failovers = { began: 0, running: false };
  let waits = 0;
  /** Answers WAIT with `held`; `during` runs while it waits, as an announcement arriving then. */
  let during = () => undefined as void;
  const redis = {
    wait: async () => {
      waits += 1;
      during();
      return held;
    },
  } as unknown as RedisClient;
  const replication = waitForReplicas(redis, 1, 100, failovers as Failovers);
  return { failovers, replication, waits: () => waits, whileWaiting: (fn: () => void) => (during = fn) };
}

t.test('held by a replica, no failover announced: stored', async (t) => {
  const s = setup(1);
  await s.replication.confirm();
  t.equal(s.waits(), 1);
});

t.test('held by no replica: refused', async (t) => {
  await t.rejects(setup(0).replication.confirm(), NotReplicatedError);
});

t.test('a failover announced while WAIT ran: refused though a replica confirmed it', async (t) => {
  const s = setup(1);
  s.whileWaiting(() => {
    s.failovers.began += 1;
    s.failovers.running = true;
  });
  await t.rejects(s.replication.confirm(), { name: 'NotReplicatedError', message: /failing the Redis master over/ });
});

t.test('a failover that began and ended while WAIT ran: refused all the same', async (t) => {
  const s = setup(1);
  s.whileWaiting(() => (s.failovers.began += 1));
  await t.rejects(s.replication.confirm(), NotReplicatedError);
});

t.test('while a failover runs, writes are refused without asking WAIT; after it, stored again', async (t) => {
  const s = setup(1);
  s.failovers.running = true;
  await t.rejects(s.replication.confirm(), NotReplicatedError);
  t.equal(s.waits(), 0, 'WAIT not asked');
  s.failovers.running = false;
  await s.replication.confirm();
  t.equal(s.waits(), 1);
});
