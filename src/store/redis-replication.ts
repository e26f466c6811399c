// Writes answered only once replicas hold them (redis_min_replicas). Redis replicates asynchronously: when Sentinel
// promotes a replica, the old master takes writes until Sentinel turns it into a replica of the new one, seconds
// later, and then drops them. A write the old master took is then lost although its caller was told it was stored,
// and the lease fence cannot tell, since the leases live on the same master. WAIT after the write tells once the old
// master has no replica left; until Sentinel has turned the other replicas, one of them can still confirm such a
// write, so a write confirmed while a failover ran (as the sentinels announce it) is not counted either. Either way
// it is refused (503) instead of answered and lost. Refused this way, a write may still have landed on a master that
// kept its place; the next write of the same document supersedes it.
import type { RedisClient } from './redis-scripts.js';
import type { Failovers } from './sentinel-failovers.js';

export class NotReplicatedError extends Error {
  override name = 'NotReplicatedError';
}

export interface Replication {
  /** Replicas that must hold a write before it counts as stored (0: none asked). */
  readonly minReplicas: number;
  /** Resolves once the connection's writes so far are held by `minReplicas` replicas; else rejects. */
  confirm(): Promise<void>;
}

/** No replica asked: a write counts once the master took it. */
export const MASTER_ONLY: Replication = { minReplicas: 0, confirm: () => Promise.resolve() };

/** No failover announced, ever: a Redis not behind Sentinel. */
const NO_FAILOVERS: Failovers = { began: 0, running: false };

export function waitForReplicas(
  redis: RedisClient,
  minReplicas: number,
  timeoutMs: number,
  failovers: Failovers = NO_FAILOVERS,
): Replication {
  if (minReplicas === 0) return MASTER_ONLY;
  return {
    minReplicas,
    async confirm(): Promise<void> {
      const began = failovers.began;
      // WAIT covers every write sent on this connection before it, whichever caller sent it.
      const held = failovers.running ? 0 : await redis.wait(minReplicas, timeoutMs);
      if (failovers.running || failovers.began !== began)
        throw new NotReplicatedError(
          'Sentinel is failing the Redis master over: a write confirmed meanwhile is not counted as stored',
        );
      if (held < minReplicas)
        throw new NotReplicatedError(
          `${held} of the ${minReplicas} Redis replicas asked for (redis_min_replicas) acknowledged the write ` +
            `within ${timeoutMs} ms: it is not counted as stored (the master may have been failed over)`,
        );
    },
  };
}
