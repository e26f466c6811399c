// A gateway's reading of its own stream: the orders owners hand it for the nodes connected to it. The stream is this
// process's alone (named by its member id, new with each start), so it is read from its first entry, each entry's
// orders one by one, and trimmed of what was handled.
import type { Logger } from '../lib/logger.js';
import { messageOf } from '../lib/thrown.js';
import { delay, realTimers, type Timers } from '../lib/timers.js';
import { gatewayKey } from '../store/layout.js';
import type { RedisClient } from '../store/redis-scripts.js';
import { gatewayEntrySchema, gatewayOrderSchema, type GatewayOrder } from './node-link-messages.js';
import {
  connected,
  LONG_BLOCK_MS,
  nextId,
  parseField,
  READ_COUNT,
  readerConnection,
  RETRY_MS,
  type StreamReply,
  type StreamWatch,
} from './streams.js';

export class GatewayReader {
  private conn: RedisClient | undefined;
  private closed = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly me: string,
    /** The orders of an entry, in the order written. */
    private readonly orders: (orders: readonly GatewayOrder[]) => void,
    private readonly watch: StreamWatch,
    private readonly log: Logger,
    /** What spaces a read again after one that failed. */
    private readonly timers: Timers = realTimers,
  ) {}

  start(): void {
    this.conn = readerConnection(this.redis);
    void this.read(this.conn);
  }

  close(): void {
    this.closed = true;
    this.conn?.disconnect();
  }

  private async read(conn: RedisClient): Promise<void> {
    const key = gatewayKey(this.prefix, this.me);
    // From the first entry: owners may write to this member's stream as soon as it is registered, before this read
    // begins, and the stream is this process's alone (a new member id each start).
    let from = '0-0';
    while (!this.closed) {
      try {
        await connected(conn, this.timers);
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
            this.watch.skip('gateway', id);
            continue;
          }
          const orders: GatewayOrder[] = [];
          for (const raw of entry.data.orders) {
            const order = gatewayOrderSchema.safeParse(raw);
            if (order.success) orders.push(order.data);
            else this.watch.skip('gateway', id);
          }
          if (orders.length > 0) this.orders(orders);
        }
        // This gateway is its stream's one reader: what it has handled goes.
        if (entries.length > 0)
          void conn
            .xtrim(key, 'MINID', nextId(from))
            .then((left) => this.watch.backlog(key, left))
            .catch(() => undefined);
      } catch (e) {
        if (this.closed) return;
        this.log.warn('reading the gateway stream failed; reading again', { error: messageOf(e) });
        await delay(this.timers, RETRY_MS, { unref: true });
      }
    }
  }
}
