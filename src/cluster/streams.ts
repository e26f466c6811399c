// What the readers and the writer of the streams between members share (node-link.ts): how entries are read, a
// connection's wait to be ready, stream ids, and the counts GET /_status shows of entries skipped and backlogs.
import type { Logger } from '../lib/logger.js';
import type { Timers } from '../lib/timers.js';
import type { RedisClient } from '../store/redis-scripts.js';
import { duplicateOf } from '../store/redis-connection.js';

/**
 * A stream longer than this has a reader that stopped (a gateway paused, an owner that cannot store): it is
 * reported, once per stream until it is short again, and never trimmed of what was not read.
 */
export const STREAM_BACKLOG_ALARM = 100_000;
/** Entries read at once. */
export const READ_COUNT = 500;
/**
 * How long a blocking read that nothing needs to end waits before it is sent again (ms): the gateway stream's, and
 * on a Redis Cluster each partition's (its connection closes when the partition goes). An idle process costs Redis
 * a command for each only this often.
 */
export const LONG_BLOCK_MS = 30_000;
/** After a failed read or write, the next waits this long. */
export const RETRY_MS = 500;

/** Entries as Redis answers them: a pending entry deleted from the stream since comes back with no fields. */
export type StreamReply = Array<[string, Array<[string, string[] | null]>]> | null;

/** Entries skipped as unreadable, and the streams holding a backlog nobody reads: counted and logged once each. */
export class StreamWatch {
  /** Entries (or orders in them) that did not parse. */
  skipped = 0;
  private readonly backlogged = new Set<string>();

  constructor(private readonly log: Logger) {}

  skip(stream: string, id: string): void {
    this.skipped += 1;
    this.log.warn('an entry between servers did not parse and was skipped', { stream, id });
  }

  /** A stream past STREAM_BACKLOG_ALARM is said once, and again after it drained. */
  backlog(key: string, length: number): void {
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

  /** How many streams hold a backlog now. */
  get backlogs(): number {
    return this.backlogged.size;
  }
}

/** The JSON of an entry's `e` field, or undefined. */
export function parseField(fields: string[]): unknown {
  const at = fields.indexOf('e');
  try {
    return at >= 0 ? JSON.parse(fields[at + 1] ?? '') : undefined;
  } catch {
    return undefined;
  }
}

/** A connection of its own, for a blocking read (its errors are the reader's to handle). */
export function readerConnection(redis: RedisClient): RedisClient {
  const conn = duplicateOf(redis);
  conn.on('error', () => undefined);
  return conn;
}

/**
 * Waits until a connection of a reader's own is ready, or RETRY_MS at most. A new connection refuses commands until
 * it is (its offline queue is off, as the store's), and a first read sent before would be logged as failed.
 */
export function connected(conn: RedisClient, timers: Timers): Promise<void> {
  if (conn.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      cancel();
      conn.off('ready', done);
      resolve();
    };
    const cancel = timers.after(RETRY_MS, done, { unref: true });
    conn.once('ready', done);
  });
}

/** The smallest stream id after `id` (`ms-seq`): XTRIM MINID keeps it and what follows. */
export function nextId(id: string): string {
  const dash = id.indexOf('-');
  return `${id.slice(0, dash)}-${BigInt(id.slice(dash + 1)) + 1n}`;
}
