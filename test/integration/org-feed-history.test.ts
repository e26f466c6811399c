// An organization's feed history in a real Redis, as the processes of a cluster keep it: what the owner keeps, the
// next owner loads (oldest first, under the same ids); a process that does not hold the partition's lease adds
// nothing; the history lapses org_feed_expiration after its last event, and goes with a deleted organization.
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import type { FeedEvent } from '../../src/feeds/feed-log.js';
import { RedisOrgFeed, type RedisOrgFeedOptions } from '../../src/feeds/redis-org-feed.js';
import { leaseKey, orgFeedKey } from '../../src/store/layout.js';
import { partitionOf, type Partition } from '../../src/store/partitions.js';
import { until } from '../support/deadline.js';
import { quietLogger } from '../support/logs.js';
import { testRedisUrl, uniquePrefix } from '../support/redis.js';

const WAIT_MS = 10_000;
const ORG = 'acme';

async function connection(t: Test): Promise<Redis> {
  const redis = new Redis(await testRedisUrl());
  t.teardown(async () => {
    await redis.quit();
  });
  return redis;
}

function history(redis: Redis, keyPrefix: string, token: string | undefined, expirationMs = 60_000) {
  const options: RedisOrgFeedOptions = {
    keyPrefix,
    expirationMs,
    tokenFor: (_p: Partition) => token,
    now: Date.now,
    log: quietLogger(),
  };
  return new RedisOrgFeed(redis, options);
}

function event(id: string, job: string, at = Date.now()): FeedEvent {
  return { id, event: 'start', at, data: { job, timestamp: 'now' } };
}

async function holdLease(redis: Redis, prefix: string, token: string, t: Test): Promise<void> {
  await redis.set(leaseKey(prefix, partitionOf(ORG)), token, 'PX', 60_000);
  t.teardown(async () => {
    await redis.del(leaseKey(prefix, partitionOf(ORG)), orgFeedKey(prefix, ORG));
  });
}

t.test('what the owner keeps, the next owner loads in order under the same ids; others add nothing', async (t) => {
  const prefix = uniquePrefix();
  const [a, b] = [await connection(t), await connection(t)];
  await holdLease(a, prefix, '7:owner', t);
  const owner = history(a, prefix, '7:owner');
  const stale = history(b, prefix, '6:paused');
  const notOwner = history(b, prefix, undefined);

  owner.kept(ORG, event('org-aaa-1', 'j1'));
  stale.kept(ORG, event('org-old-9', 'stale'));
  notOwner.kept(ORG, event('org-xxx-1', 'elsewhere'));
  owner.kept(ORG, event('org-aaa-2', 'j2'));
  await b.ping(); // one connection answers in order: the refused adds have been tried by now
  const next = history(b, prefix, undefined);
  const loaded = await until(
    'both events to be kept',
    async () => {
      const got = await next.load(ORG);
      return got.length >= 2 ? got : undefined;
    },
    WAIT_MS,
  );
  t.same(
    loaded.map((e) => [e.id, e.data.job]),
    [
      ['org-aaa-1', 'j1'],
      ['org-aaa-2', 'j2'],
    ],
    "the owner's events only: a lease not held (any more) keeps nothing",
  );
  t.match(orgFeedKey(prefix, ORG), new RegExp(`\\{p${partitionOf(ORG)}\\}:feed:acme$`), "in the organization's slot");
  t.same(await next.load('other-org'), [], 'another organization has none');
});

t.test('the history lapses after org_feed_expiration, and goes with a deleted organization', async (t) => {
  const prefix = uniquePrefix();
  const redis = await connection(t);
  await holdLease(redis, prefix, '1:owner', t);
  const short = history(redis, prefix, '1:owner', 1000);
  short.kept(ORG, event('org-aaa-1', 'j1', Date.now() - 5000));
  short.kept(ORG, event('org-aaa-2', 'j2'));
  const key = orgFeedKey(prefix, ORG);
  await until('the events to be kept', async () => ((await redis.xlen(key)) > 0 ? true : undefined), WAIT_MS);
  t.same(
    (await short.load(ORG)).map((e) => e.id),
    ['org-aaa-2'],
    'events older than org_feed_expiration are not loaded',
  );
  await until('the history to lapse', async () => ((await redis.exists(key)) === 0 ? true : undefined), WAIT_MS);
  t.same(await short.load(ORG), [], 'nothing is left once it lapsed');

  const kept = history(redis, prefix, '1:owner');
  kept.kept(ORG, event('org-bbb-1', 'j3'));
  await until('the event to be kept', async () => ((await redis.exists(key)) === 1 ? true : undefined), WAIT_MS);
  kept.deleted(ORG);
  await until('the history to go', async () => ((await redis.exists(key)) === 0 ? true : undefined), WAIT_MS);
  t.pass('a deleted organization leaves no history');
});
