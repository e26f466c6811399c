// Opens the connection a `redis_url` names: one Redis, a Redis Cluster (found by asking the node the URL names, so
// any node of a cluster is enough), or a master through Sentinel (`redis+sentinel://HOST:PORT,HOST:PORT/NAME`).
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { realTimers, type Timers } from '../lib/timers.js';
import type { RedisClient } from './redis-scripts.js';

/** Redis did not become ready in time; the message names the URL (without password) and the last error. */
export class RedisUnavailableError extends Error {
  override name = 'RedisUnavailableError';
}

export interface OpenedRedis {
  redis: RedisClient;
  mode: 'single' | 'cluster' | 'sentinel';
  /** The last connection error, for messages. */
  lastError(): Error | undefined;
}

/**
 * Fail fast while Redis is away: with no offline queue a command is refused at once instead of waiting, and none
 * is resent after a reconnect, so a write refused to its caller never lands later behind its back.
 */
const FAIL_FAST: RedisOptions = { enableOfflineQueue: false, autoResendUnfulfilledCommands: false };

/** Connects in the background, as ioredis does; `whenReady` waits for it. */
export function openRedis(url: string, mode: 'single' | 'cluster' | 'sentinel' = modeOfUrl(url)): OpenedRedis {
  let last: Error | undefined;
  let redis: RedisClient;
  if (mode === 'sentinel') redis = new Redis({ ...sentinelOptions(url), ...FAIL_FAST });
  else if (mode === 'cluster') {
    const { host, port, ...node } = nodeOptions(url);
    // Every command goes to the master of its key's slot; the store never pipelines keys of several partitions.
    const options: ClusterOptions = { enableOfflineQueue: false, redisOptions: { ...node, ...FAIL_FAST } };
    redis = new Cluster([{ host, port }], options);
  } else redis = new Redis(url, FAIL_FAST);
  refuseUnansweredOnClose(redis);
  // Without a listener ioredis prints every failed reconnect; keep the last one for messages.
  redis.on('error', (err: Error) => {
    last = err;
  });
  return { redis, mode, lastError: () => last };
}

/** A connection of its own with `redis`'s options (for a blocking read, a subscription), guarded as openRedis's. */
export function duplicateOf(redis: RedisClient): RedisClient {
  const own = redis.duplicate();
  refuseUnansweredOnClose(own);
  return own;
}

/**
 * When a connection closes, ioredis keeps the commands it sent and had no answer to, to send them again on the next
 * one; without autoResendUnfulfilledCommands it drops them there unsettled, and their callers (a blocking read of a
 * stream, a lease renewal) wait for ever. They are refused instead, as the connection closes: each may or may not
 * have been carried out, as with any command whose answer was lost. A Redis Cluster's connections are its nodes'.
 */
function refuseUnansweredOnClose(client: RedisClient): void {
  if (client instanceof Cluster) {
    client.on('+node', (node: Redis) => refuseUnansweredOnClose(node));
    return;
  }
  // As ioredis, only commands sent on a connection that was ready: before, its own start-up commands are in flight.
  let ready = false;
  client.on('ready', () => (ready = true));
  client.on('close', () => {
    if (!ready) return;
    ready = false;
    const lost = new Error('the connection to Redis closed before the command was answered');
    for (let item = client.commandQueue.shift(); item !== undefined; item = client.commandQueue.shift())
      item.command.reject(lost);
  });
}

/**
 * Connects to what the URL names and asks whether it is a node of a Redis Cluster; if so, the connection returned
 * is a cluster client seeded with that node. `timers`: what times each wait; Node's unless a test has its own.
 */
export async function connectRedis(url: string, timeoutMs: number, timers: Timers = realTimers): Promise<OpenedRedis> {
  const first = openRedis(url);
  await whenReady(first, url, timeoutMs, timers);
  if (first.mode !== 'single') return first;
  const info = await first.redis.info('cluster');
  if (!/cluster_enabled:1/.test(info)) return first;
  first.redis.disconnect();
  const cluster = openRedis(url, 'cluster');
  await whenReady(cluster, url, timeoutMs, timers);
  return cluster;
}

/**
 * Resolves once the connection is ready; rejects with a RedisUnavailableError, and drops the connection, when it
 * ends first or is not ready within `timeoutMs`.
 */
export function whenReady(
  opened: OpenedRedis,
  url: string,
  timeoutMs: number,
  timers: Timers = realTimers,
): Promise<void> {
  const { redis } = opened;
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const finish = (err?: Error): void => {
      cancelTimer();
      redis.off('ready', onReady);
      redis.off('end', onEnd);
      if (err) {
        redis.disconnect();
        reject(err);
      } else resolve();
    };
    const fail = (why: string): void => {
      const error = opened.lastError();
      const last = error ? ` (${error.message})` : '';
      finish(new RedisUnavailableError(`Redis at ${redact(url)} ${why}${last}`, { cause: error }));
    };
    const onReady = (): void => finish();
    const onEnd = (): void => fail('closed the connection');
    const cancelTimer = timers.after(timeoutMs, () => fail(`did not answer within ${timeoutMs / 1000} s`));
    redis.on('ready', onReady);
    redis.on('end', onEnd);
  });
}

/** Whether the URL names a master through Sentinel (`redis+sentinel://`, `rediss+sentinel://`). */
export function isSentinelUrl(url: string): boolean {
  return url.startsWith('redis+sentinel://') || url.startsWith('rediss+sentinel://');
}

function modeOfUrl(url: string): 'single' | 'sentinel' {
  return isSentinelUrl(url) ? 'sentinel' : 'single';
}

/** Host, port and credentials of a `redis://` or `rediss://` URL. */
function nodeOptions(url: string): RedisOptions & { host: string; port: number } {
  const u = new URL(url);
  return {
    host: u.hostname || '127.0.0.1',
    port: Number(u.port || 6379),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** The sentinels and the master's name a `redis+sentinel://` URL names. */
export function sentinelsOf(url: string): { sentinels: Array<{ host: string; port: number }>; name: string } {
  const { sentinels = [], name = '' } = sentinelOptions(url);
  return { sentinels: sentinels.map((s) => ({ host: s.host ?? '127.0.0.1', port: s.port ?? 26379 })), name };
}

/** `redis+sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT...]/MASTER_NAME[/DB]`. */
function sentinelOptions(url: string): RedisOptions {
  const match = /^rediss?\+sentinel:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/]+)\/([^/]+)(?:\/(\d+))?$/.exec(url);
  if (!match) throw new RangeError(`${redact(url)} is not redis+sentinel://HOST:PORT[,HOST:PORT]/MASTER_NAME`);
  const [, username, password, hosts = '', name = '', db] = match;
  const sentinels = hosts.split(',').map((hp) => {
    const at = hp.lastIndexOf(':');
    return at === -1 ? { host: hp, port: 26379 } : { host: hp.slice(0, at), port: Number(hp.slice(at + 1)) };
  });
  return {
    sentinels,
    name: decodeURIComponent(name),
    // Follow the sentinels' +switch-master at once: the replaced master takes writes (and drops them) until Sentinel
    // turns it into a replica, seconds later, and only then closes its clients' connections.
    failoverDetector: true,
    ...(username ? { username: decodeURIComponent(username) } : {}),
    ...(password ? { password: decodeURIComponent(password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(url.startsWith('rediss') ? { tls: {} } : {}),
  };
}

/** The URL with any password hidden, for error messages. */
export function redact(url: string): string {
  return url.replace(/(\/\/[^:@/]*:)[^@/]*@/, '$1***@');
}
