// The hint bus between the processes on one Redis: one pub/sub channel per key prefix, on which each process says
// what it changed (names, never the record) for the others to read again from the store. Pub/sub loses what is
// published while a subscriber is away, so a hint is never the only way a change arrives: the receivers also reload
// from the store periodically and after this bus reconnects (`reconnected`).
import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { z } from 'zod';
import type { Logger } from '../lib/logger.js';
import { realTimers, type Timers } from '../lib/timers.js';
import { busChannel } from '../store/layout.js';
import type { RedisClient } from '../store/redis-scripts.js';

/** What a process hears on the bus. */
export interface BusListener {
  /** A hint another process published, as it arrived: the listener checks it. */
  hint(raw: unknown): void;
  /** The subscription was lost and is back: whatever was published meanwhile is lost. */
  reconnected(): void;
}

const envelopeSchema = z.object({ from: z.string(), hint: z.unknown() });

/** How long `listen` waits for the subscription before it goes on without it (a reconnect catches up later). */
const SUBSCRIBE_TIMEOUT_MS = 5000;

export class ClusterBus {
  /** Tells this process's own hints apart: Redis delivers them to every subscriber, the publisher's included. */
  readonly id = randomUUID();
  private readonly channel: string;
  private subscriber: RedisClient | undefined;

  constructor(
    /** The store's connection: hints are published on it. */
    private readonly redis: RedisClient,
    prefix: string,
    private readonly log: Logger,
    /** What bounds the wait for the subscription. */
    private readonly timers: Timers = realTimers,
  ) {
    this.channel = busChannel(prefix);
  }

  /**
   * Publishes a hint to the other processes. Never throws: a hint lost while Redis is away is made up for by their
   * reloads.
   */
  publish(hint: object): void {
    this.redis.publish(this.channel, JSON.stringify({ from: this.id, hint })).catch((error: unknown) => {
      this.log.debug('a hint to the other servers was lost', { error });
    });
  }

  /**
   * Subscribes on a connection of its own (a subscribed connection takes no other command) and calls `listener`
   * from then on; resolves once subscribed, or after a few seconds with a warning.
   */
  async listen(listener: BusListener): Promise<void> {
    if (this.subscriber) throw new Error('the bus has a listener already');
    // Queued while away: the subscription is made as soon as the connection is, and made again after each reconnect.
    // Named, so that CLIENT LIST tells which process a subscriber is.
    const connectionName = `infra-bus:${this.id}`;
    const sub =
      this.redis instanceof Cluster
        ? this.redis.duplicate([], {
            enableOfflineQueue: true,
            redisOptions: { ...this.redis.options.redisOptions, connectionName },
          })
        : this.redis.duplicate({ enableOfflineQueue: true, autoResubscribe: true, connectionName });
    this.subscriber = sub;
    sub.on('error', (error: Error) => this.log.debug('the bus connection failed; it reconnects', { error }));
    sub.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.receive(message, listener);
    });
    let subscribed = false;
    sub.on('ready', () => {
      if (subscribed) listener.reconnected();
    });
    let cancel: (() => void) | undefined;
    const timedOut = new Promise<void>((resolve) => {
      const warn = () => {
        this.log.warn('the bus is not subscribed yet: changes made by other servers arrive with the next reload');
        resolve();
      };
      cancel = this.timers.after(SUBSCRIBE_TIMEOUT_MS, warn, { unref: true });
    });
    const subscribing = sub.subscribe(this.channel).then(
      () => {
        subscribed = true;
      },
      (error: unknown) => this.log.warn('subscribing to the bus failed', { error }),
    );
    await Promise.race([subscribing, timedOut]);
    cancel?.();
    // A subscription made after the wait ended still counts: what was published until then is caught up.
    if (!subscribed) void subscribing.then(() => subscribed && listener.reconnected());
  }

  async close(): Promise<void> {
    const sub = this.subscriber;
    this.subscriber = undefined;
    if (!sub) return;
    await sub.quit().catch(() => sub.disconnect());
  }

  private receive(message: string, listener: BusListener): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      this.log.debug('a bus message that is not JSON was dropped');
      return;
    }
    const envelope = envelopeSchema.safeParse(parsed);
    if (!envelope.success) this.log.debug('a bus message without sender was dropped');
    else if (envelope.data.from !== this.id) listener.hint(envelope.data.hint);
  }
}
