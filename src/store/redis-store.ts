// RedisStore: the persistence port over Redis, one hash per collection plus a registry of collection names.
import { Redis } from 'ioredis';
import type { ChainableCommander } from 'ioredis';
import { checkCollection, collectionKey, encodeDoc, isWithin, registryKey } from './keys.js';
import type { CollectionName, Store, StoreState } from './store.js';

const CONNECT_TIMEOUT_MS = 5000;
const PING_TIMEOUT_MS = 1000;

/** Redis did not become ready in time; the message names the URL (without password) and the last error. */
export class RedisUnavailableError extends Error {
  override name = 'RedisUnavailableError';
}

export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  readonly #redis: Redis;
  readonly #url: string;
  #lastError: Error | undefined;

  /** Connects in the background; commands wait in ioredis's offline queue until Redis is ready. */
  constructor(url: string, readonly keyPrefix: string = 'infra:') {
    this.#url = url;
    this.#redis = new Redis(url);
    // Without a listener ioredis prints every failed reconnect; keep the last one for messages.
    this.#redis.on('error', (err: Error) => {
      this.#lastError = err;
    });
  }

  /** A store whose connection is ready, or a RedisUnavailableError after `timeoutMs`. */
  static async connect(url: string, keyPrefix = 'infra:', timeoutMs = CONNECT_TIMEOUT_MS): Promise<RedisStore> {
    const store = new RedisStore(url, keyPrefix);
    try {
      await store.#whenReady(timeoutMs);
    } catch (err) {
      store.#redis.disconnect();
      throw err;
    }
    return store;
  }

  /** HGETALL of the collection's hash; a missing hash is an empty map. */
  async load(collection: CollectionName): Promise<Map<string, unknown>> {
    const key = this.#key(collection);
    const fields = await this.#redis.hgetall(key);
    const docs = new Map<string, unknown>();
    for (const [id, json] of Object.entries(fields)) docs.set(id, decode(json, key, id));
    return docs;
  }

  /** HGET of one field of the collection's hash; undefined when absent. */
  async get(collection: CollectionName, id: string): Promise<unknown> {
    const key = this.#key(collection);
    const json = await this.#redis.hget(key, id);
    return json === null ? undefined : decode(json, key, id);
  }

  /** HSET of one field, with SADD of the collection to the registry, in one MULTI. */
  async put(collection: CollectionName, id: string, doc: unknown): Promise<void> {
    const key = this.#key(collection);
    const json = encodeDoc(doc);
    await execAll(this.#redis.multi().sadd(registryKey(this.keyPrefix), collection).hset(key, id, json));
  }

  /** One HSET carrying every field, with SADD to the registry, in one MULTI. */
  async putMany(collection: CollectionName, docs: ReadonlyArray<readonly [string, unknown]>): Promise<void> {
    const key = this.#key(collection);
    if (docs.length === 0) return;
    const fields = new Map<string, string>();
    for (const [id, doc] of docs) fields.set(id, encodeDoc(doc));
    await execAll(this.#redis.multi().sadd(registryKey(this.keyPrefix), collection).hset(key, fields));
  }

  /** HDEL of one field. */
  async remove(collection: CollectionName, id: string): Promise<void> {
    await this.#redis.hdel(this.#key(collection), id);
  }

  /** Reads the registry, then DELs every hash at or below `collection` and SREMs their names. */
  async drop(collection: CollectionName): Promise<void> {
    checkCollection(collection);
    const registry = registryKey(this.keyPrefix);
    const names = (await this.#redis.smembers(registry)).filter((name) => isWithin(name, collection));
    if (names.length === 0) return;
    const keys = names.map((name) => collectionKey(this.keyPrefix, name));
    await execAll(this.#redis.multi().del(...keys).srem(registry, ...names));
  }

  /** PING answered within PING_TIMEOUT_MS. */
  async state(): Promise<StoreState> {
    if (this.#redis.status === 'end') return 'unavailable';
    const ping = this.#redis.ping().then(
      (reply) => reply === 'PONG',
      () => false,
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    const ok = await Promise.race([ping, late]);
    clearTimeout(timer);
    return ok ? 'ok' : 'unavailable';
  }

  /** QUIT when connected (pending replies arrive first), otherwise drops the connection attempt. */
  async close(): Promise<void> {
    if (this.#redis.status === 'end') return;
    if (this.#redis.status !== 'ready') {
      this.#redis.disconnect();
      return;
    }
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }

  #key(collection: CollectionName): string {
    checkCollection(collection);
    return collectionKey(this.keyPrefix, collection);
  }

  #whenReady(timeoutMs: number): Promise<void> {
    const redis = this.#redis;
    if (redis.status === 'ready') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const finish = (err?: Error): void => {
        clearTimeout(timer);
        redis.off('ready', onReady);
        redis.off('end', onEnd);
        if (err) reject(err);
        else resolve();
      };
      const fail = (why: string): void => {
        const last = this.#lastError ? ` (${this.#lastError.message})` : '';
        finish(new RedisUnavailableError(`Redis at ${redact(this.#url)} ${why}${last}`, { cause: this.#lastError }));
      };
      const onReady = (): void => finish();
      const onEnd = (): void => fail('closed the connection');
      const timer = setTimeout(() => fail(`did not answer within ${timeoutMs / 1000} s`), timeoutMs);
      redis.on('ready', onReady);
      redis.on('end', onEnd);
    });
  }
}

function decode(json: string, key: string, id: string): unknown {
  try {
    return JSON.parse(json);
  } catch (err) {
    throw new Error(`corrupt document ${JSON.stringify(id)} in ${key}`, { cause: err });
  }
}

/** EXEC, turning the first failed command's error into a rejection. */
async function execAll(chain: ChainableCommander): Promise<void> {
  const results = await chain.exec();
  if (results === null) throw new Error('Redis transaction was aborted');
  const failed = results.find(([err]) => err !== null);
  if (failed) throw failed[0];
}

/** The URL with any password hidden, for error messages. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured URL';
  }
}
