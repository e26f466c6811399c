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
import type { Logger } from '../lib/logger.js';
import { realTimers, type Timers } from '../lib/timers.js';
import type { Fencing } from '../store/fencing.js';
import { gatewayKey } from '../store/layout.js';
import type { Partition } from '../store/partitions.js';
import type { RedisClient } from '../store/redis-scripts.js';
import { GatewayReader } from './gateway-reader.js';
import { InboxReader } from './inbox-reader.js';
import type { GatewayOrder, InboxEntry, GatewayReport } from './node-link-messages.js';
import { StreamWatch } from './streams.js';
import { StreamWriter } from './stream-writer.js';

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
  /** What spaces the writes and reads again after a failure, and the inboxes' claims. */
  timers?: Timers;
}

/** This process's ends of the streams: the writer, its gateway stream's reader, and its partitions' inboxes' reader. */
export class NodeLink {
  private readonly watch: StreamWatch;
  private readonly writer: StreamWriter;
  private readonly gateway: GatewayReader;
  private readonly inboxes: InboxReader;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** This process's member id: its gateway stream, and its name in the inboxes' consumer group. */
    private readonly me: string,
    handlers: NodeLinkHandlers,
    log: Logger,
    opts: NodeLinkOptions = {},
  ) {
    this.watch = new StreamWatch(log);
    const timers = opts.timers ?? realTimers;
    const ports = {
      replicated: opts.replicated ?? (() => Promise.resolve()),
      fencing: opts.fencing,
      resync: () => handlers.resync(),
    };
    this.writer = new StreamWriter(redis, prefix, me, log, ports, timers);
    const orders = (list: readonly GatewayOrder[]) => handlers.orders(list);
    this.gateway = new GatewayReader(redis, prefix, me, orders, this.watch, log, timers);
    this.inboxes = new InboxReader(redis, prefix, me, (p, entry) => handlers.inbox(p, entry), this.watch, log, {
      ...(opts.inboxBlockMs === undefined ? {} : { blockMs: opts.inboxBlockMs }),
      ...(opts.fencing === undefined ? {} : { fencing: opts.fencing }),
      timers,
    });
  }

  /** Starts reading this gateway's stream, from its first entry, and the inboxes of the partitions served. */
  start(): void {
    this.gateway.start();
    this.inboxes.start();
  }

  /**
   * An order for a gateway, written at the end of this turn with the others. A job's fan-out calls this once per
   * node with one message object: those become one order naming every node.
   */
  order(gateway: string, order: GatewayOrder, message?: object): void {
    this.writer.order(gateway, order, message);
  }

  /** An event for a partition's owner, appended to its inbox at the end of this turn with the others. */
  event(partition: Partition, event: GatewayReport): void {
    this.writer.event(partition, event);
  }

  /**
   * Reads the partition's inbox from now on, as its owner: first what any earlier owner read but never
   * acknowledged, claimed, and this member's own unacknowledged entries, applied before anything newer.
   */
  serve(partition: Partition): Promise<void> {
    return this.inboxes.serve(partition);
  }

  /** Whether this process reads the partition's inbox now (it owns the partition, and its organizations run). */
  serving(partition: Partition): boolean {
    return this.inboxes.serving(partition);
  }

  /** Stops reading the partition's inbox: another process owns it now. */
  unserve(partition: Partition): void {
    this.inboxes.unserve(partition);
  }

  /** Claims and applies the partition's entries others left unacknowledged for `minIdleMs` (InboxReader.claim). */
  claim(partition: Partition, minIdleMs: number): Promise<void> {
    return this.inboxes.claim(partition, minIdleMs);
  }

  /** Trims the partition's inbox behind what every owner is done with. */
  trim(partition: Partition): Promise<void> {
    return this.inboxes.trim(partition);
  }

  /** Forgets the gateways that left the cluster, and deletes their streams. */
  forget(gateways: ReadonlySet<string>): void {
    this.writer.forget(gateways);
  }

  async close(): Promise<void> {
    this.inboxes.close();
    await this.writer.close();
    this.gateway.close();
    await this.redis.del(gatewayKey(this.prefix, this.me)).catch(() => 0);
  }

  /** Entries (or orders in them) skipped as unreadable. */
  get skipped(): number {
    return this.watch.skipped;
  }

  /** Acknowledgements refused because the partition's lease had passed. */
  get fencedAcks(): number {
    return this.inboxes.fencedAcks;
  }

  /** What GET /_status shows of the streams: entries skipped, acknowledgements refused, backlogs now. */
  figures(): { skipped_entries: number; fenced_acks: number; backlogged: number } {
    return {
      skipped_entries: this.watch.skipped,
      fenced_acks: this.inboxes.fencedAcks,
      backlogged: this.watch.backlogs,
    };
  }
}
