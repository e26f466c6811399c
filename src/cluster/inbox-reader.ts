// An owner's reading of its partitions' inboxes: what the gateways heard from the partitions' nodes. The owner reads
// each as the consumer group's member under its id, applies an entry only while its lease on the partition is sure,
// and acknowledges it only once its effects are stored, under that lease (checked inside Redis with the
// acknowledgement): a new owner claims (XAUTOCLAIM) what the last one read and never acknowledged, and applies it
// again, which changes nothing (the job and node tables ignore what they already know). Inboxes are trimmed only
// behind the oldest entry still pending.
import { Cluster } from 'ioredis';
import type { Logger } from '../lib/logger.js';
import { messageOf } from '../lib/thrown.js';
import { delay, realTimers, type Timers } from '../lib/timers.js';
import type { Fencing } from '../store/fencing.js';
import { inboxKey, INBOX_GROUP, leaseKey } from '../store/layout.js';
import { partitionName, type Partition } from '../store/partitions.js';
import { isFenced, withScripts, type RedisClient, type ScriptCommands } from '../store/redis-scripts.js';
import { inboxEntrySchema, type InboxEntry } from './node-link-messages.js';
import {
  connected,
  LONG_BLOCK_MS,
  parseField,
  READ_COUNT,
  readerConnection,
  RETRY_MS,
  type StreamReply,
  type StreamWatch,
} from './streams.js';

/** Acknowledged entries a partition's owner lets pile up before it trims its inbox behind them. */
const TRIM_EVERY_ACKS = 1000;
/**
 * How long the inboxes' blocking read waits before it is sent again (ms). A change of the partitions served ends
 * it at once (CLIENT UNBLOCK on one Redis, a connection of its own per partition on a Redis Cluster), so this only
 * bounds what a lost wake-up costs.
 */
const DEFAULT_INBOX_BLOCK_MS = 5000;
/** How often a wake-up is tried again while the read it should end has not begun blocking yet. */
const WAKE_RETRY_MS = 20;
/** How many times (a second's worth): after that the read ends on its own within the block time. */
const WAKE_TRIES = 50;
/**
 * How often an owner claims the entries of its partitions that others read and left unacknowledged: rare (a process
 * read an entry just as it let the partition go, after the new owner's claim at adoption), so rarely looked for,
 * at two commands a partition.
 */
const RECLAIM_EVERY_MS = 60_000;
/** An entry is claimed once unacknowledged this long: its reader let the partition go, or died, meanwhile. */
const RECLAIM_IDLE_MS = 10_000;

export interface InboxReaderOptions {
  /** How long the inboxes' blocking read waits before it is sent again (ms; tests lengthen it). */
  blockMs?: number;
  /** The partitions' leases; without them (a link of its own in a test), entries are acknowledged unfenced. */
  fencing?: Pick<Fencing, 'tokenFor'>;
  /** What spaces the reads again after a failure, the wake-ups' tries and the claims. */
  timers?: Timers;
}

export class InboxReader {
  private readonly served = new Set<Partition>();
  /** Inbox entries being applied: a claim that reads them again as pending leaves them to the first reading. */
  private readonly applying = new Set<string>();
  /** One Redis: the connection whose one blocking read covers every served partition's inbox. */
  private inboxReader: RedisClient | undefined;
  /** Its client id, which CLIENT UNBLOCK names; asked again after each reconnection. */
  private inboxReaderId: number | undefined;
  /** Counts the changes of the partitions served. */
  private servedVersion = 0;
  /** The version a blocking read of the inboxes began with, while it blocks. */
  private readingVersion: number | undefined;
  /** Ends the wait of an inbox reader that has no partition to read. */
  private idleWake: (() => void) | undefined;
  /** A Redis Cluster, where one read cannot span slots: a reader per served partition, on a connection of its own. */
  private readonly partitionReaders = new Map<Partition, RedisClient>();
  private readonly inboxBlockMs: number;
  private started = false;
  private closed = false;
  /** Stops the claims' timer, once they run. */
  private stopReclaims: (() => void) | undefined;
  private readonly cluster: boolean;
  /** Acknowledgements refused because the partition's lease had passed: those entries wait for its owner. */
  fencedAcks = 0;
  /** Acknowledgements per partition since its inbox was last trimmed. */
  private readonly acksSinceTrim = new Map<Partition, number>();
  private readonly scripts: RedisClient & ScriptCommands;
  private readonly fencing: Pick<Fencing, 'tokenFor'> | undefined;
  private readonly timers: Timers;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** This process's member id: its name in the inboxes' consumer group. */
    private readonly me: string,
    /** Applies an entry: resolves true once what it says is stored, false when it is to wait for another owner. */
    private readonly applyEntry: (partition: Partition, entry: InboxEntry) => Promise<boolean>,
    private readonly watch: StreamWatch,
    private readonly log: Logger,
    opts: InboxReaderOptions = {},
  ) {
    this.cluster = redis instanceof Cluster;
    this.scripts = withScripts(redis);
    this.fencing = opts.fencing;
    this.inboxBlockMs = opts.blockMs ?? DEFAULT_INBOX_BLOCK_MS;
    this.timers = opts.timers ?? realTimers;
  }

  /** Starts reading the inboxes of the partitions served, and claiming what others left in them. */
  start(): void {
    this.started = true;
    if (this.cluster) for (const p of this.served) this.readPartition(p);
    else {
      const conn = (this.inboxReader = readerConnection(this.redis));
      conn.on('reconnecting', () => (this.inboxReaderId = undefined));
      void this.readInboxes(conn);
    }
    // Also trims each inbox, which a partition with few acknowledgements would not reach TRIM_EVERY_ACKS for.
    this.stopReclaims = this.timers.every(RECLAIM_EVERY_MS, () => void this.reclaim(), { unref: true });
  }

  /** Claims what others left unacknowledged in every served partition's inbox, and trims each. */
  private async reclaim(): Promise<void> {
    const passes = await Promise.allSettled(
      [...this.served].map((p) => this.claim(p, RECLAIM_IDLE_MS).then(() => this.trim(p))),
    );
    const failed = passes.filter((r) => r.status === 'rejected');
    if (failed.length > 0)
      this.log.warn('claiming unacknowledged inbox entries failed; the next pass tries again', {
        partitions: failed.length,
        error: messageOf(failed[0]?.reason),
      });
  }

  /**
   * Reads the partition's inbox from now on, as its owner: first what any earlier owner read but never
   * acknowledged, claimed, and this member's own unacknowledged entries, applied before anything newer.
   */
  async serve(partition: Partition): Promise<void> {
    const key = inboxKey(this.prefix, partition);
    try {
      await this.redis.xgroup('CREATE', key, INBOX_GROUP, '0', 'MKSTREAM');
    } catch (e) {
      if (!messageOf(e).includes('BUSYGROUP')) throw e;
    }
    await this.claim(partition, 0);
    this.served.add(partition);
    this.servedChanged();
    // Before start, start() begins the reads.
    if (this.cluster && this.started) this.readPartition(partition);
  }

  /** Whether this process reads the partition's inbox now (it owns the partition, and its organizations run). */
  serving(partition: Partition): boolean {
    return this.served.has(partition);
  }

  /** Stops reading the partition's inbox: another process owns it now. */
  unserve(partition: Partition): void {
    if (!this.served.delete(partition)) return;
    this.servedChanged();
    // Its reader's connection goes with it: a read ended by a timer could take entries meant for the next owner.
    this.partitionReaders.get(partition)?.disconnect();
    this.partitionReaders.delete(partition);
  }

  /**
   * Claims the partition's entries read by others and unacknowledged for `minIdleMs`, then applies every entry
   * pending for this member. Owners call it at adoption (0: the last owner is gone) and from time to time, for an
   * entry read by a process just before it let the partition go.
   */
  async claim(partition: Partition, minIdleMs: number): Promise<void> {
    const key = inboxKey(this.prefix, partition);
    let cursor = '0-0';
    do {
      const reply = (await this.redis.xautoclaim(
        key,
        INBOX_GROUP,
        this.me,
        minIdleMs,
        cursor,
        'COUNT',
        READ_COUNT,
        'JUSTID',
      )) as [string, string[]];
      cursor = reply[0];
    } while (cursor !== '0-0');
    await this.applyPending(partition);
  }

  /** Applies every entry of the partition's inbox this member read and has not acknowledged. */
  private async applyPending(partition: Partition): Promise<void> {
    const key = inboxKey(this.prefix, partition);
    let from = '0';
    for (;;) {
      const reply = (await this.redis.xreadgroup(
        'GROUP',
        INBOX_GROUP,
        this.me,
        'COUNT',
        READ_COUNT,
        'STREAMS',
        key,
        from,
      )) as StreamReply;
      const entries = reply?.[0]?.[1] ?? [];
      if (entries.length === 0) return;
      await this.apply(key, partition, entries);
      from = entries[entries.length - 1]?.[0] ?? from;
    }
  }

  close(): void {
    this.closed = true;
    this.stopReclaims?.();
    this.idleWake?.();
    this.inboxReader?.disconnect();
    for (const conn of this.partitionReaders.values()) conn.disconnect();
    this.partitionReaders.clear();
  }

  /**
   * One Redis: one blocking read over every served partition's inbox at a time. A change of the partitions served
   * ends the read under way (servedChanged), so the next covers them at once.
   */
  private async readInboxes(conn: RedisClient): Promise<void> {
    let failed = false;
    while (!this.closed) {
      const partitions = [...this.served];
      try {
        if (partitions.length === 0) {
          await new Promise<void>((resolve) => (this.idleWake = resolve));
          this.idleWake = undefined;
          continue;
        }
        await connected(conn, this.timers);
        if (failed) await this.afterFailedRead(partitions);
        failed = false;
        this.inboxReaderId ??= Number(await conn.client('ID'));
        this.readingVersion = this.servedVersion;
        await this.readSome(conn, partitions, this.inboxBlockMs);
      } catch (e) {
        if (this.closed) return;
        this.log.warn('reading the partitions’ inboxes failed; reading again', { error: messageOf(e) });
        failed = true;
        await delay(this.timers, RETRY_MS, { unref: true });
      } finally {
        this.readingVersion = undefined;
      }
    }
  }

  /** A Redis Cluster: reads one partition's inbox for as long as it is served, on a connection of its own. */
  private readPartition(partition: Partition): void {
    if (this.partitionReaders.has(partition) || this.closed) return;
    const conn = readerConnection(this.redis);
    this.partitionReaders.set(partition, conn);
    const reading = () => this.partitionReaders.get(partition) === conn && !this.closed;
    void (async () => {
      let failed = false;
      while (reading()) {
        try {
          await connected(conn, this.timers);
          if (failed) await this.afterFailedRead([partition]);
          failed = false;
          await this.readSome(conn, [partition], LONG_BLOCK_MS);
        } catch (e) {
          if (!reading()) return;
          this.log.warn('reading a partition’s inbox failed; reading again', {
            partition: String(partition),
            error: messageOf(e),
          });
          failed = true;
          await delay(this.timers, RETRY_MS, { unref: true });
        }
      }
    })();
  }

  /**
   * A read that failed may have been carried out, its answer lost with the connection: the entries it took wait,
   * read by this member and not applied, until applied here, before the next read (which fails as the last did
   * while Redis is away, and comes here again).
   */
  private async afterFailedRead(partitions: readonly Partition[]): Promise<void> {
    for (const p of partitions) if (this.served.has(p) && !this.closed) await this.applyPending(p);
  }

  /** The partitions served changed: a reader waiting for one starts, and a blocking read over the old ones ends. */
  private servedChanged(): void {
    this.servedVersion += 1;
    this.idleWake?.();
    if (!this.cluster) void this.unblockReader();
  }

  /**
   * Ends the inboxes' blocking read when it began before the latest change (CLIENT UNBLOCK answers it as timed
   * out, having taken nothing). A read about to be sent is not blocking yet: the wake-up is tried again.
   */
  private async unblockReader(): Promise<void> {
    for (let i = 0; i < WAKE_TRIES && !this.closed; i++) {
      if (this.readingVersion === undefined || this.readingVersion === this.servedVersion) return;
      const id = this.inboxReaderId;
      // Refused (an ACL without CLIENT UNBLOCK) or failed: the read ends on its own within the block time.
      const ended = id === undefined ? 0 : await this.redis.client('UNBLOCK', id).catch(() => undefined);
      if (ended !== 0) return;
      await delay(this.timers, WAKE_RETRY_MS, { unref: true });
    }
  }

  /** Blocks until new entries of `partitions` come (or `blockMs` passes) and applies them. */
  private async readSome(conn: RedisClient, partitions: readonly Partition[], blockMs: number): Promise<void> {
    const keys = partitions.map((p) => inboxKey(this.prefix, p));
    const streams = [...keys, ...keys.map(() => '>')];
    const reply = (await conn.xreadgroup(
      'GROUP',
      INBOX_GROUP,
      this.me,
      'COUNT',
      READ_COUNT,
      'BLOCK',
      blockMs,
      'STREAMS',
      ...streams,
    )) as StreamReply;
    if (!reply) return;
    await Promise.all(
      reply.map(([key, entries]) => {
        const partition = partitions[keys.indexOf(key)];
        return partition === undefined ? undefined : this.apply(key, partition, entries);
      }),
    );
  }

  /**
   * Applies entries in order, then acknowledges each once stored, under the partition's lease. While the lease is in
   * doubt nothing is applied: the entries wait, pending, for this process's next read or for the next owner.
   */
  private async apply(key: string, partition: Partition, entries: Array<[string, string[] | null]>): Promise<void> {
    if (this.fencing && this.fencing.tokenFor(partition) === undefined) return;
    const stored: Array<Promise<string | undefined>> = [];
    for (const [id, fields] of entries) {
      if (this.applying.has(id)) continue;
      if (fields === null) {
        // Deleted by hand (this link never trims what is pending): nothing is left to apply.
        this.log.error('an inbox entry read but not applied was deleted from its stream', {
          partition: partitionName(partition),
          id,
        });
        stored.push(Promise.resolve(id));
        continue;
      }
      const entry = inboxEntrySchema.safeParse(parseField(fields));
      if (!entry.success) {
        this.watch.skip('inbox', id);
        stored.push(Promise.resolve(id));
        continue;
      }
      this.applying.add(id);
      stored.push(
        this.applyEntry(partition, entry.data)
          .finally(() => this.applying.delete(id))
          .then(
            (done) => (done ? id : undefined),
            (e: unknown) => {
              this.log.error('applying what a gateway heard failed; a later owner applies it again', {
                error: messageOf(e),
              });
              return undefined;
            },
          ),
      );
    }
    const ids = (await Promise.all(stored)).filter((id): id is string => id !== undefined);
    if (ids.length > 0) await this.acknowledge(key, partition, ids);
  }

  /** XACK under the partition's lease (checked inside Redis); a refusal leaves the entries for the next owner. */
  private async acknowledge(key: string, partition: Partition, ids: readonly string[]): Promise<void> {
    if (!this.fencing) await this.redis.xack(key, INBOX_GROUP, ...ids);
    else {
      const token = this.fencing.tokenFor(partition);
      if (token === undefined) return void (this.fencedAcks += ids.length);
      try {
        await this.scripts.fencedAck(leaseKey(this.prefix, partition), key, token, INBOX_GROUP, ...ids);
      } catch (e) {
        if (!isFenced(e)) throw e;
        this.fencedAcks += ids.length;
        return;
      }
    }
    const acks = (this.acksSinceTrim.get(partition) ?? 0) + ids.length;
    this.acksSinceTrim.set(partition, acks >= TRIM_EVERY_ACKS ? 0 : acks);
    if (acks >= TRIM_EVERY_ACKS) await this.trim(partition);
  }

  /** Trims the partition's inbox behind what every owner is done with, and reports a backlog. */
  async trim(partition: Partition): Promise<void> {
    const key = inboxKey(this.prefix, partition);
    this.watch.backlog(key, await this.scripts.inboxTrim(key, INBOX_GROUP));
  }
}
