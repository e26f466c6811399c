// An organization's feed history in Redis, for a cluster: its owner adds each event of the organization's feed to a
// Stream, and the next owner (after a hand-over, or once the last one died) starts the organization's log with
// what it finds there, so a reader's Last-Event-ID from the earlier owner resumes exactly. Each add checks the
// writer's lease in the same script, as the store's writes do: an owner that lost the organization adds nothing.
// The Stream keeps org_feed_expiration of events and lives as long after its last one. What an owner killed at
// once had not added yet is unknown to the next one, whose readers then get start_of_history.
import { z } from 'zod';
import { messageOf } from '../lib/thrown.js';
import type { Logger } from '../lib/logger.js';
import { leaseKey, orgFeedKey } from '../store/layout.js';
import { partitionOf, type Partition } from '../store/partitions.js';
import { FENCED_REPLY, type RedisClient } from '../store/redis-scripts.js';
import type { FeedEvent } from './feed-log.js';
import type { OrgFeedHistory } from './feed-hub.js';

// KEYS: the partition's lease, the Stream. ARGV: the lease token, the oldest entry id kept (ms), the event, the
// Stream's time to live (ms).
const ADD = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('${FENCED_REPLY}') end
redis.call('XADD', KEYS[2], 'MINID', ARGV[2], '*', 'e', ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
`;

interface HistoryCommands {
  orgFeedAdd(
    lease: string,
    stream: string,
    token: string,
    minId: number,
    event: string,
    ttlMs: number,
  ): Promise<number>;
}

const storedEvent = z.object({
  id: z.string(),
  event: z.string(),
  at: z.number(),
  data: z.record(z.string(), z.unknown()),
});

export interface RedisOrgFeedOptions {
  keyPrefix: string;
  /** org_feed_expiration: how long events are kept. */
  expirationMs: number;
  /** This process's lease token of a partition, while it holds one. */
  tokenFor: (partition: Partition) => string | undefined;
  now: () => number;
  log: Logger;
}

export class RedisOrgFeed implements OrgFeedHistory {
  private readonly redis: RedisClient & HistoryCommands;
  /** Whether the last add failed: an outage is logged once, not once an event. */
  private failing = false;

  constructor(
    redis: RedisClient,
    private readonly o: RedisOrgFeedOptions,
  ) {
    if (!('orgFeedAdd' in redis)) redis.defineCommand('orgFeedAdd', { lua: ADD, numberOfKeys: 2 });
    this.redis = redis as RedisClient & HistoryCommands;
  }

  kept(org: string, e: FeedEvent): void {
    const partition = partitionOf(org);
    const token = this.o.tokenFor(partition);
    if (token === undefined) return; // not the owner (any more): the next one starts from what the store holds
    const { keyPrefix, expirationMs } = this.o;
    this.redis
      .orgFeedAdd(
        leaseKey(keyPrefix, partition),
        orgFeedKey(keyPrefix, org),
        token,
        Math.max(0, e.at - expirationMs),
        JSON.stringify(e),
        expirationMs,
      )
      .then(
        () => void (this.failing = false),
        (error: unknown) => {
          if (!this.failing)
            this.o.log.warn('an organization feed event was not kept in Redis', { org, error: messageOf(error) });
          this.failing = true;
        },
      );
  }

  deleted(org: string): void {
    this.redis.del(orgFeedKey(this.o.keyPrefix, org)).catch((error: unknown) => {
      this.o.log.warn("a deleted organization's feed history was not removed; it lapses by itself", {
        org,
        error: messageOf(error),
      });
    });
  }

  /** The events kept for the organization within org_feed_expiration, oldest first; none when Redis fails. */
  async load(org: string): Promise<FeedEvent[]> {
    let entries: Array<[string, string[]]>;
    try {
      entries = await this.redis.xrange(orgFeedKey(this.o.keyPrefix, org), '-', '+');
    } catch (error) {
      this.o.log.warn("an organization's feed history could not be read; its feed starts anew", {
        org,
        error: messageOf(error),
      });
      return [];
    }
    const horizon = this.o.now() - this.o.expirationMs;
    return entries.flatMap(([, fields]) => {
      const at = fields.indexOf('e');
      const e = at < 0 ? undefined : parsed(fields[at + 1]);
      return e !== undefined && e.at >= horizon ? [e] : [];
    });
  }
}

function parsed(raw: string | undefined): FeedEvent | undefined {
  if (raw === undefined) return undefined;
  try {
    const e = storedEvent.safeParse(JSON.parse(raw));
    return e.success ? e.data : undefined;
  } catch {
    return undefined;
  }
}
