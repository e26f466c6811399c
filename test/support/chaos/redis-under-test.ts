// The Redis a chaos run's members share, of the kind asked (one redis-server, a master with two replicas under
// Sentinel, a Redis Cluster of three masters with a replica each), and the nemesis's faults of it: kill -9 and start
// again on its append-only file, SENTINEL FAILOVER or kill -9 of the master, CLUSTER FAILOVER or kill -9 of the master
// holding the default organization's slot; the killed master comes back as a replica once the fault is healed.
import { partitionOf } from '../../../src/store/partitions.js';
import { collectionKey } from '../../../src/store/layout.js';
import { startPrivateRedis } from '../private-redis.js';
import { startRedisCluster } from '../redis-cluster.js';
import { startRedisSentinel } from '../redis-sentinel.js';
import type { TeardownScope } from '../teardown-scope.js';
import type { RedisKind } from './history.js';
import type { Fault, FaultKind } from './nemesis.js';

/** What a fault did, for the history: when it struck, what it hit, and when Redis took writes again (a master
 * promoted) where it tells. */
export interface FaultDone {
  at: number;
  /** The member a kill or pause hit (its index, not its rank). */
  member?: number;
  detail: string;
  backAt?: number;
}

export interface RedisUnderTest {
  kind: RedisKind;
  url: string;
  /** The fault kinds this Redis can be given. */
  kinds: readonly FaultKind[];
  apply(f: Fault): Promise<FaultDone>;
  heal(f: Fault): Promise<string>;
}

/** Every key of a partition shares its slot: this one names the default organization's. */
const DEFAULT_SLOT_KEY = collectionKey('infra:', partitionOf('default'), 'org/default/nodes');

export async function startRedisUnderTest(scope: TeardownScope, kind: RedisKind): Promise<RedisUnderTest> {
  switch (kind) {
    case 'single': {
      // Its data kept in an append-only file written at every command: a restart, not a loss of data.
      const redis = await startPrivateRedis(scope);
      return {
        kind,
        url: redis.url,
        kinds: ['redis_restart'],
        apply: async () => {
          const at = Date.now();
          await redis.kill();
          return { at, detail: `redis-server at ${redis.url} killed (-9)` };
        },
        heal: async () => {
          await redis.start({ keepData: true });
          return 'redis-server started again on its append-only file';
        },
      };
    }
    case 'sentinel': {
      const redis = await startRedisSentinel(scope);
      let killed: number | null = null;
      return {
        kind,
        url: redis.url,
        kinds: ['sentinel_failover'],
        apply: async (f) => {
          const at = Date.now();
          const { from, to } = f.way === 'kill' ? await redis.killMaster() : await redis.failover();
          if (f.way === 'kill') killed = from;
          const how = f.way === 'kill' ? 'killed (-9)' : 'failed over (SENTINEL FAILOVER)';
          return { at, detail: `master on port ${from} ${how}; port ${to} promoted`, backAt: Date.now() };
        },
        heal: async () => {
          if (killed === null) return 'nothing to heal';
          const port = killed;
          killed = null;
          await redis.restore(port);
          return `port ${port} started again as a replica, in sync`;
        },
      };
    }
    case 'cluster': {
      const redis = await startRedisCluster(scope, 3, 1);
      let killed: number | null = null;
      return {
        kind,
        url: redis.url,
        kinds: ['cluster_failover'],
        apply: async (f) => {
          if (f.way !== 'kill') {
            const at = Date.now();
            const { from, to } = await redis.failover(DEFAULT_SLOT_KEY);
            return { at, detail: `CLUSTER FAILOVER: port ${to} took the slot from ${from}`, backAt: Date.now() };
          }
          const from = await redis.masterOf(DEFAULT_SLOT_KEY);
          const at = Date.now();
          await redis.kill(from);
          killed = from;
          const to = await redis.promoted(DEFAULT_SLOT_KEY, from);
          return { at, detail: `master on port ${from} killed (-9); port ${to} promoted`, backAt: Date.now() };
        },
        heal: async () => {
          if (killed === null) return 'nothing to heal';
          const port = killed;
          killed = null;
          await redis.restart(port);
          return `port ${port} started again, a replica in sync`;
        },
      };
    }
  }
}
