// The Redis Streams between partition owners and node gateways (node-link-messages.ts has their shapes).
//
// - An owner hands a gateway the job messages for the nodes connected to it: one entry per gateway per turn, in
//   which one fan-out to many nodes is one order naming them all. The stream is the gateway's own (named by its
//   member id, new with each process): it reads it from its first entry and trims what it has read. What was
//   written for a gateway that died is lost with its connections, and its nodes' jobs deal with that.
// - A gateway hands a partition's owner what its nodes said (answers, up and down): one entry per partition per
//   turn, appended to the partition's inbox. The owner reads the inbox as the consumer group's member under its id
//   and acknowledges an entry only once what it says is stored, under the partition's lease (checked inside Redis
//   with the acknowledgement), so a new owner claims (XAUTOCLAIM) what the last one read but never acknowledged and
//   applies it again; applying twice changes nothing (the job and node tables ignore what they already know).
// - Nothing unread or unacknowledged is ever trimmed: owners trim their inboxes behind the oldest entry still
//   pending, and a stream that grows past a bound (nobody reads it) is reported, not cut.
import { Cluster } from 'ioredis';
import type { Logger } from '../lib/logger.js';
import { messageOf } from '../lib/thrown.js';
import type { Fencing } from '../store/fencing.js';
import { gatewayKey, inboxKey, INBOX_GROUP, leaseKey } from '../store/layout.js';
import { duplicateOf } from '../store/redis-connection.js';
import { partitionName, partitionOf, type Partition } from '../store/partitions.js';
import { isFenced, withScripts, type RedisClient, type ScriptCommands } from '../store/redis-scripts.js';
import {
  gatewayEntrySchema,
  gatewayOrderSchema,
  inboxEntrySchema,
  type GatewayOrder,
  type InboxEntry,
  type NodeEvent,
} from './node-link-messages.js';

/** What the link hands on. */
export interface NodeLinkHandlers {
  /** An owner's orders for this gateway, in the order written. */
  orders(orders: readonly GatewayOrder[]): void;
  /**
   * Events for owners were lost while Redis was away and it answers again: the up and down changes among them are
   * said again, as the state of every node connected here.
   */
  resync(): void;
  /**
   * A gateway's events for a partition this process owns, applied in the order read (synchronously, before the next
   * entry). Resolves true once what they say is stored (the entry is acknowledged), false when this process does not
   * serve the partition any more (the entry waits for the owner that does).
   */
  inbox(partition: Partition, entry: InboxEntry): Promise<boolean>;
}

/**
 * A stream longer than this has a reader that stopped (a gateway paused, an owner that cannot store): it is
 * reported, once per stream until it is short again, and never trimmed of what was not read.
 */
export const STREAM_BACKLOG_ALARM = 100_000;
/** Gateways that left remembered at most, so that nothing held is written again for them. */
const FORGOTTEN_KEPT = 1000;
/** Events held at most per partition while Redis refuses their writes. */
const MAX_HELD_EVENTS = 100_000;
/** Acknowledged entries a partition's owner lets pile up before it trims its inbox behind them. */
const TRIM_EVERY_ACKS = 1000;
/** Entries read at once. */
const READ_COUNT = 500;
/**
 * How long a blocking read that nothing needs to end waits before it is sent again (ms): the gateway stream's, and
 * on a Redis Cluster each partition's (its connection closes when the partition goes). An idle process costs Redis
 * a command for each only this often.
 */
const LONG_BLOCK_MS = 30_000;
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
/** After a failed read, the next waits this long. */
const RETRY_MS = 500;
/**
 * How often an owner claims the entries of its partitions that others read and left unacknowledged: rare (a process
 * read an entry just as it let the partition go, after the new owner's claim at adoption), so rarely looked for,
 * at two commands a partition.
 */
const RECLAIM_EVERY_MS = 60_000;
/** An entry is claimed once unacknowledged this long: its reader let the partition go, or died, meanwhile. */
const RECLAIM_IDLE_MS = 10_000;

/** Entries as Redis answers them: a pending entry trimmed from the stream since comes back with no fields. */
type StreamReply = Array<[string, Array<[string, string[] | null]>]> | null;

export interface NodeLinkOptions {
  /** How long the inboxes' blocking read waits before it is sent again (ms; tests lengthen it). */
  inboxBlockMs?: number;
  /** Resolves once replicas hold the writes sent so far (redis_min_replicas); rejects when they do not. */
  replicated?: () => Promise<void>;
  /**
   * The partitions' leases: an inbox entry is applied only while its partition's lease is surely this process's,
   * and acknowledged only under that lease. Without it (a link of its own in a test), entries are acknowledged
   * unfenced.
   */
  fencing?: Pick<Fencing, 'tokenFor'>;
}

export class NodeLink {
  private readonly toGateways = new Map<string, GatewayOrder[]>();
  private readonly toInboxes = new Map<Partition, NodeEvent[]>();
  private flushing = false;
  /** The last fan-out order per gateway this turn, with the message object it carries (see order). */
  private readonly lastSend = new Map<string, { order: Extract<GatewayOrder, { t: 'send' }>; message: object }>();
  private readonly served = new Set<Partition>();
  /** Inbox entries being applied: a claim that reads them again as pending leaves them to the first reading. */
  private readonly applying = new Set<string>();
  private gatewayReader: RedisClient | undefined;
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
  private closed = false;
  private reclaimer: NodeJS.Timeout | undefined;
  private readonly cluster: boolean;
  private readonly replicated: () => Promise<void>;
  /** Entries that did not parse, for GET /_status. */
  skipped = 0;
  /** Acknowledgements refused because the partition's lease had passed: those entries wait for its owner. */
  fencedAcks = 0;
  /** The longest backlog seen of each stream past STREAM_BACKLOG_ALARM, by key (reported once until it drains). */
  private readonly backlogged = new Set<string>();
  /** Acknowledgements per partition since its inbox was last trimmed. */
  private readonly acksSinceTrim = new Map<Partition, number>();
  private readonly scripts: RedisClient & ScriptCommands;
  private readonly fencing: Pick<Fencing, 'tokenFor'> | undefined;
  /** Inbox events were let go (too many held): once writes go through again, the gateway says where its nodes are. */
  private inboxLost = false;
  /** Writes failed and are held to be written again. */
  private holding = false;
  /** Gateways that left the cluster: nothing is written again for them. */
  private readonly forgotten = new Set<string>();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** This process's member id: its gateway stream, and its name in the inboxes' consumer group. */
    private readonly me: string,
    private readonly handlers: NodeLinkHandlers,
    private readonly log: Logger,
    opts: NodeLinkOptions = {},
  ) {
    this.cluster = redis instanceof Cluster;
    this.scripts = withScripts(redis);
    this.fencing = opts.fencing;
    this.inboxBlockMs = opts.inboxBlockMs ?? DEFAULT_INBOX_BLOCK_MS;
    this.replicated = opts.replicated ?? (() => Promise.resolve());
  }

  /** Starts reading this gateway's stream, from its first entry, and the inboxes of the partitions served. */
  start(): void {
    this.gatewayReader = this.connection();
    void this.readGateway(this.gatewayReader);
    if (this.cluster) for (const p of this.served) this.readPartition(p);
    else {
      const conn = (this.inboxReader = this.connection());
      conn.on('reconnecting', () => (this.inboxReaderId = undefined));
      void this.readInboxes(conn);
    }
    // Also trims each inbox, which a partition with few acknowledgements would not reach TRIM_EVERY_ACKS for.
    this.reclaimer = setInterval(() => {
      for (const p of this.served)
        this.claim(p, RECLAIM_IDLE_MS)
          .then(() => this.trim(p))
          .catch((e: unknown) =>
            this.log.warn('claiming unacknowledged inbox entries failed', { error: messageOf(e) }),
          );
    }, RECLAIM_EVERY_MS);
    this.reclaimer.unref();
  }

  /**
   * An order for a gateway, written at the end of this turn with the others. A job's fan-out calls this once per
   * node with one message object: those become one order naming every node.
   */
  order(gateway: string, order: GatewayOrder, message?: object): void {
    const last = this.lastSend.get(gateway);
    if (order.t === 'send' && message !== undefined && last?.message === message && sameOwner(last.order, order)) {
      last.order.nodes.push(...order.nodes);
      return;
    }
    let orders = this.toGateways.get(gateway);
    if (!orders) this.toGateways.set(gateway, (orders = []));
    orders.push(order);
    if (order.t === 'send' && message !== undefined) this.lastSend.set(gateway, { order, message });
    else this.lastSend.delete(gateway);
    this.scheduleFlush();
  }

  /** An event for a partition's owner, appended to its inbox at the end of this turn with the others. */
  event(partition: Partition, event: NodeEvent): void {
    let events = this.toInboxes.get(partition);
    if (!events) this.toInboxes.set(partition, (events = []));
    events.push(event);
    this.scheduleFlush();
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
    if (this.cluster && this.gatewayReader !== undefined) this.readPartition(partition);
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

  /** Deletes the streams of gateways that left the cluster. */
  forget(gateways: ReadonlySet<string>): void {
    for (const g of gateways) {
      this.forgotten.add(g);
      if (this.forgotten.size > FORGOTTEN_KEPT) this.forgotten.delete(this.forgotten.values().next().value as string);
      this.toGateways.delete(g);
      this.redis.del(gatewayKey(this.prefix, g)).catch(() => 0);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.reclaimer);
    this.idleWake?.();
    await this.flush();
    this.gatewayReader?.disconnect();
    this.inboxReader?.disconnect();
    for (const conn of this.partitionReaders.values()) conn.disconnect();
    this.partitionReaders.clear();
    await this.redis.del(gatewayKey(this.prefix, this.me)).catch(() => 0);
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.flushing = false;
    this.lastSend.clear();
    const orders = [...this.toGateways];
    const inboxes = [...this.toInboxes];
    this.toGateways.clear();
    this.toInboxes.clear();
    const orderWrites = orders.map(([gateway, list]) =>
      this.redis.xadd(gatewayKey(this.prefix, gateway), '*', 'e', JSON.stringify({ owner: this.me, orders: list })),
    );
    const inboxWrites = inboxes.map(([partition, events]) =>
      this.redis.xadd(inboxKey(this.prefix, partition), '*', 'e', JSON.stringify({ gateway: this.me, events })),
    );
    const ordered = await Promise.allSettled(orderWrites);
    const appended = await Promise.allSettled(inboxWrites);
    // Entries a master took but no replica holds are lost with it if it is failed over: written again, as failed ones.
    const unconfirmed =
      appended.some((r) => r.status === 'fulfilled') &&
      (await this.replicated().then(
        () => false,
        () => true,
      ));
    let held = false;
    for (const [i, [gateway, list]] of orders.entries())
      if (ordered[i]?.status === 'rejected') held = this.holdOrders(gateway, list) || held;
    for (const [i, [partition, events]] of inboxes.entries())
      if (unconfirmed || appended[i]?.status === 'rejected') held = this.holdEvents(partition, events) || held;
    if (held) this.retryLater();
    else if (this.holding) {
      this.holding = false;
      this.log.info('what was held while Redis was away is written');
    }
    if (!held && appended.length > 0 && this.inboxLost) {
      this.inboxLost = false;
      this.handlers.resync();
    }
  }

  /**
   * Orders whose write failed (Redis away) go again, before any newer, while the owner still surely holds their
   * organization's lease and their gateway is not gone: a later owner, or no gateway, has no use for them.
   */
  private holdOrders(gateway: string, orders: readonly GatewayOrder[]): boolean {
    if (this.forgotten.has(gateway) || this.closed) return false;
    const still = orders.filter((o) => this.fencing?.tokenFor(partitionOf(o.org)) !== undefined || !this.fencing);
    if (still.length === 0) return false;
    this.toGateways.set(gateway, [...still, ...(this.toGateways.get(gateway) ?? [])]);
    return true;
  }

  /**
   * Events whose write failed go again, before any newer: an answer a node gave must reach its owner. Past
   * MAX_HELD_EVENTS the oldest are let go, and once writes go through the gateway says where its nodes are
   * (resync); a node's client says its result again until the owner has it.
   */
  private holdEvents(partition: Partition, events: readonly NodeEvent[]): boolean {
    if (this.closed) return false;
    const merged = [...events, ...(this.toInboxes.get(partition) ?? [])];
    const over = merged.length - MAX_HELD_EVENTS;
    if (over > 0) {
      merged.splice(0, over);
      this.inboxLost = true;
    }
    this.toInboxes.set(partition, merged);
    return true;
  }

  private retryLater(): void {
    if (!this.holding)
      this.log.warn('Redis refused what this server writes for the others; it is held and written again');
    this.holding = true;
    setTimeout(() => this.scheduleFlush(), RETRY_MS).unref();
  }

  private async readGateway(conn: RedisClient): Promise<void> {
    const key = gatewayKey(this.prefix, this.me);
    // From the first entry: owners may write to this member's stream as soon as it is registered, before this read
    // begins, and the stream is this process's alone (a new member id each start).
    let from = '0-0';
    while (!this.closed) {
      try {
        await connected(conn);
        const reply = (await conn.xread(
          'COUNT',
          READ_COUNT,
          'BLOCK',
          LONG_BLOCK_MS,
          'STREAMS',
          key,
          from,
        )) as StreamReply;
        const entries = reply?.[0]?.[1] ?? [];
        for (const [id, fields] of entries) {
          from = id;
          if (fields === null) continue;
          const entry = gatewayEntrySchema.safeParse(parseField(fields));
          if (!entry.success) {
            this.skip('gateway', id);
            continue;
          }
          const orders: GatewayOrder[] = [];
          for (const raw of entry.data.orders) {
            const order = gatewayOrderSchema.safeParse(raw);
            if (order.success) orders.push(order.data);
            else this.skip('gateway', id);
          }
          if (orders.length > 0) this.handlers.orders(orders);
        }
        // This gateway is its stream's one reader: what it has handled goes.
        if (entries.length > 0)
          void conn
            .xtrim(key, 'MINID', nextId(from))
            .then((left) => this.watchBacklog(key, left))
            .catch(() => undefined);
      } catch (e) {
        if (this.closed) return;
        this.log.warn('reading the gateway stream failed; reading again', { error: messageOf(e) });
        await wait(RETRY_MS);
      }
    }
  }

  /** A connection of this link's own, for a blocking read. */
  private connection(): RedisClient {
    const conn = duplicateOf(this.redis);
    conn.on('error', () => undefined);
    return conn;
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
        await connected(conn);
        if (failed) await this.afterFailedRead(partitions);
        failed = false;
        this.inboxReaderId ??= Number(await conn.client('ID'));
        this.readingVersion = this.servedVersion;
        await this.readSome(conn, partitions, this.inboxBlockMs);
      } catch (e) {
        if (this.closed) return;
        this.log.warn('reading the partitions’ inboxes failed; reading again', { error: messageOf(e) });
        failed = true;
        await wait(RETRY_MS);
      } finally {
        this.readingVersion = undefined;
      }
    }
  }

  /** A Redis Cluster: reads one partition's inbox for as long as it is served, on a connection of its own. */
  private readPartition(partition: Partition): void {
    if (this.partitionReaders.has(partition) || this.closed) return;
    const conn = this.connection();
    this.partitionReaders.set(partition, conn);
    const reading = () => this.partitionReaders.get(partition) === conn && !this.closed;
    void (async () => {
      let failed = false;
      while (reading()) {
        try {
          await connected(conn);
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
          await wait(RETRY_MS);
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
      await wait(WAKE_RETRY_MS);
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
        this.skip('inbox', id);
        stored.push(Promise.resolve(id));
        continue;
      }
      this.applying.add(id);
      stored.push(
        this.handlers
          .inbox(partition, entry.data)
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
    this.watchBacklog(key, await this.scripts.inboxTrim(key, INBOX_GROUP));
  }

  /** A stream past STREAM_BACKLOG_ALARM is said once, and again after it drained. */
  private watchBacklog(key: string, length: number): void {
    if (length < STREAM_BACKLOG_ALARM) {
      this.backlogged.delete(key);
      return;
    }
    if (this.backlogged.has(key)) return;
    this.backlogged.add(key);
    this.log.error('a stream between servers holds a backlog nobody reads; nothing of it is trimmed', {
      stream: key,
      entries: length,
    });
  }

  /** What GET /_status shows of the streams: entries skipped, acknowledgements refused, backlogs now. */
  figures(): { skipped_entries: number; fenced_acks: number; backlogged: number } {
    return { skipped_entries: this.skipped, fenced_acks: this.fencedAcks, backlogged: this.backlogged.size };
  }

  private skip(stream: string, id: string): void {
    this.skipped += 1;
    this.log.warn('an entry between servers did not parse and was skipped', { stream, id });
  }
}

function parseField(fields: string[]): unknown {
  const at = fields.indexOf('e');
  try {
    return at >= 0 ? JSON.parse(fields[at + 1] ?? '') : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Waits until a connection of the link's own is ready, or RETRY_MS at most. A new connection refuses commands until
 * it is (its offline queue is off, as the store's), and a first read sent before would be logged as failed.
 */
function connected(conn: RedisClient): Promise<void> {
  if (conn.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      conn.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, RETRY_MS).unref();
    conn.once('ready', done);
  });
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function sameOwner(a: GatewayOrder, b: GatewayOrder): boolean {
  return a.org === b.org && a.epoch === b.epoch;
}

/** The smallest stream id after `id` (`ms-seq`): XTRIM MINID keeps it and what follows. */
export function nextId(id: string): string {
  const dash = id.indexOf('-');
  return `${id.slice(0, dash)}-${BigInt(id.slice(dash + 1)) + 1n}`;
}
