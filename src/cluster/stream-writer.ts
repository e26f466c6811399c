// The writing side of the streams between members: what this process hands on, gathered per turn. As an owner, job
// messages for nodes connected to other gateways (one entry per gateway per turn, one fan-out to many nodes one
// order naming them all); as a gateway, what its nodes said, for their partitions' owners (one inbox entry per
// partition per turn). A write Redis refuses (it is away) is held and written again, in order.
import type { Logger } from '../lib/logger.js';
import { realTimers, type Timers } from '../lib/timers.js';
import type { Fencing } from '../store/fencing.js';
import { gatewayKey, inboxKey } from '../store/layout.js';
import { partitionOf, type Partition } from '../store/partitions.js';
import type { RedisClient } from '../store/redis-scripts.js';
import type { GatewayOrder, GatewayReport } from './node-link-messages.js';
import { RETRY_MS } from './streams.js';

/** Gateways that left remembered at most, so that nothing held is written again for them. */
const FORGOTTEN_KEPT = 1000;
/** Events held at most per partition while Redis refuses their writes. */
const MAX_HELD_EVENTS = 100_000;

export interface StreamWriterPorts {
  /** Resolves once replicas hold the writes sent so far (redis_min_replicas); rejects when they do not. */
  replicated: () => Promise<void>;
  /** The leases: orders held are written again only while the owner surely still holds their partitions. */
  fencing: Pick<Fencing, 'tokenFor'> | undefined;
  /** Events held were let go (too many) and writes go through again: the up and down changes are said again. */
  resync(): void;
}

export class StreamWriter {
  private readonly toGateways = new Map<string, GatewayOrder[]>();
  private readonly toInboxes = new Map<Partition, GatewayReport[]>();
  private flushing = false;
  /** The last fan-out order per gateway this turn, with the message object it carries (see order). */
  private readonly lastSend = new Map<string, { order: Extract<GatewayOrder, { t: 'send' }>; message: object }>();
  /** Inbox events were let go (too many held): once writes go through again, the gateway says where its nodes are. */
  private inboxLost = false;
  /** Writes failed and are held to be written again. */
  private holding = false;
  /** Gateways that left the cluster: nothing is written again for them. */
  private readonly forgotten = new Set<string>();
  private closed = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** This process's member id, which its entries name. */
    private readonly me: string,
    private readonly log: Logger,
    private readonly ports: StreamWriterPorts,
    /** What spaces a write again after one Redis refused. */
    private readonly timers: Timers = realTimers,
  ) {}

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
  event(partition: Partition, event: GatewayReport): void {
    let events = this.toInboxes.get(partition);
    if (!events) this.toInboxes.set(partition, (events = []));
    events.push(event);
    this.scheduleFlush();
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

  /** Writes what is gathered; nothing is held or written again from now on. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
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
      (await this.ports.replicated().then(
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
      const wrote = [...ordered, ...appended].some((r) => r.status === 'fulfilled');
      this.log.info(
        wrote
          ? 'what was held while Redis was away is written'
          : 'what was held while Redis was away is let go: its organizations’ leases are in doubt',
      );
    }
    if (!held && appended.length > 0 && this.inboxLost) {
      this.inboxLost = false;
      this.ports.resync();
    }
  }

  /**
   * Orders whose write failed (Redis away) go again, before any newer, while the owner still surely holds their
   * organization's lease and their gateway is not gone: a later owner, or no gateway, has no use for them.
   */
  private holdOrders(gateway: string, orders: readonly GatewayOrder[]): boolean {
    if (this.forgotten.has(gateway) || this.closed) return false;
    const still = orders.filter(
      (o) => this.ports.fencing?.tokenFor(partitionOf(o.org)) !== undefined || !this.ports.fencing,
    );
    if (still.length === 0) return false;
    this.toGateways.set(gateway, [...still, ...(this.toGateways.get(gateway) ?? [])]);
    return true;
  }

  /**
   * Events whose write failed go again, before any newer: an answer a node gave must reach its owner. Past
   * MAX_HELD_EVENTS the oldest are let go, and once writes go through the gateway says where its nodes are
   * (resync); a node's client says its result again until the owner has it.
   */
  private holdEvents(partition: Partition, events: readonly GatewayReport[]): boolean {
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
    this.timers.after(RETRY_MS, () => this.scheduleFlush(), { unref: true });
  }
}

function sameOwner(a: GatewayOrder, b: GatewayOrder): boolean {
  return a.org === b.org && a.epoch === b.epoch;
}
