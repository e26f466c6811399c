// RedisStore: the persistence port over Redis, one hash per collection and per field map, plus a registry of
// collection names.
import { Redis } from 'ioredis';
import type { ChainableCommander } from 'ioredis';
import {
  checkCollection,
  collectionKey,
  encodeDoc,
  fieldMapsKey,
  fieldsKey,
  isWithin,
  markerKey,
  registryKey,
} from './keys.js';
import type { CollectionName, Store, StoreOp, StoreState } from './store.js';

const CONNECT_TIMEOUT_MS = 5000;
/** How often the marker is looked for besides each reconnect: a FLUSHALL loses data without a reconnect. */
const LOSS_CHECK_MS = 5000;
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
  #lossTimer: NodeJS.Timeout | undefined;

  /** Connects in the background; commands wait in ioredis's offline queue until Redis is ready. */
  constructor(
    url: string,
    readonly keyPrefix: string = 'infra:',
  ) {
    this.#url = url;
    // Fail fast while Redis is away: with no offline queue a command is refused at once instead of waiting, and
    // none is resent after a reconnect, so a write refused to its caller never lands later behind its back.
    this.#redis = new Redis(url, { enableOfflineQueue: false, autoResendUnfulfilledCommands: false });
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
      await store.#redis.set(markerKey(keyPrefix), 'written by infra-server', 'NX');
    } catch (err) {
      store.#redis.disconnect();
      throw err;
    }
    return store;
  }

  /** Watches the marker: on each reconnect and every LOSS_CHECK_MS. */
  onLost(writeBack: () => Promise<void>): void {
    let busy = false;
    const check = async () => {
      if (busy || this.#redis.status !== 'ready') return;
      busy = true;
      try {
        if ((await this.#redis.exists(markerKey(this.keyPrefix))) === 0) {
          await writeBack();
          await this.#redis.set(markerKey(this.keyPrefix), 'written by infra-server');
        }
      } catch (e) {
        this.#lastError = e instanceof Error ? e : new Error(String(e));
      } finally {
        busy = false;
      }
    };
    this.#redis.on('ready', () => void check());
    this.#lossTimer = setInterval(() => void check(), LOSS_CHECK_MS);
    this.#lossTimer.unref();
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

  /** HSET and HDEL of the field map's hash, with SADDs to the registry and the collection's field maps, in one MULTI. */
  async putFields(
    collection: CollectionName,
    id: string,
    fields: ReadonlyArray<readonly [string, unknown]>,
  ): Promise<void> {
    checkCollection(collection);
    if (fields.length === 0) return;
    await execAll(this.#setFields(this.#redis.multi(), collection, id, fields));
  }

  #setFields(
    chain: ChainableCommander,
    collection: CollectionName,
    id: string,
    fields: ReadonlyArray<readonly [string, unknown]>,
  ): ChainableCommander {
    const set = new Map<string, string>();
    const removed: string[] = [];
    for (const [field, value] of fields) {
      if (value === null) {
        set.delete(field);
        removed.push(field);
      } else set.set(field, encodeDoc(value));
    }
    const key = fieldsKey(this.keyPrefix, collection, id);
    chain.sadd(registryKey(this.keyPrefix), collection).sadd(fieldMapsKey(this.keyPrefix, collection), id);
    // Removals first: a field removed then set again in one call ends set.
    const gone = removed.filter((f) => !set.has(f));
    if (gone.length > 0) chain.hdel(key, ...gone);
    if (set.size > 0) chain.hset(key, set);
    return chain;
  }

  /** HGETALL of the field map's hash. */
  async getFields(collection: CollectionName, id: string): Promise<Map<string, unknown>> {
    checkCollection(collection);
    const key = fieldsKey(this.keyPrefix, collection, id);
    const fields = new Map<string, unknown>();
    for (const [field, json] of Object.entries(await this.#redis.hgetall(key)))
      fields.set(field, decode(json, key, field));
    return fields;
  }

  /** DEL of the field map's hash and SREM of its id. */
  async removeFields(collection: CollectionName, id: string): Promise<void> {
    checkCollection(collection);
    await execAll(
      this.#redis
        .multi()
        .del(fieldsKey(this.keyPrefix, collection, id))
        .srem(fieldMapsKey(this.keyPrefix, collection), id),
    );
  }

  /**
   * Every HSET and HDEL (of documents and of field map fields) and every DEL of a field map in one MULTI, with the
   * registry's SADDs and SREMs: Redis runs all or none.
   */
  async apply(ops: readonly StoreOp[]): Promise<void> {
    if (ops.length === 0) return;
    const chain = this.#redis.multi();
    for (const op of ops) {
      if ('fields' in op) {
        checkCollection(op.collection);
        if (op.fields.length > 0) this.#setFields(chain, op.collection, op.id, op.fields);
      } else if ('removeFields' in op) {
        checkCollection(op.collection);
        chain
          .del(fieldsKey(this.keyPrefix, op.collection, op.id))
          .srem(fieldMapsKey(this.keyPrefix, op.collection), op.id);
      } else if ('remove' in op) chain.hdel(this.#key(op.collection), op.id);
      else
        chain.sadd(registryKey(this.keyPrefix), op.collection).hset(this.#key(op.collection), op.id, encodeDoc(op.doc));
    }
    await execAll(chain);
  }

  /** HDEL of one field. */
  async remove(collection: CollectionName, id: string): Promise<void> {
    await this.#redis.hdel(this.#key(collection), id);
  }

  /** Reads the registry and the field map ids, then DELs every hash at or below `collection` and SREMs their names. */
  async drop(collection: CollectionName): Promise<void> {
    checkCollection(collection);
    const registry = registryKey(this.keyPrefix);
    const names = (await this.#redis.smembers(registry)).filter((name) => isWithin(name, collection));
    if (names.length === 0) return;
    const keys = names.flatMap((name) => [collectionKey(this.keyPrefix, name), fieldMapsKey(this.keyPrefix, name)]);
    for (const name of names) {
      for (const id of await this.#redis.smembers(fieldMapsKey(this.keyPrefix, name))) {
        keys.push(fieldsKey(this.keyPrefix, name, id));
      }
    }
    await execAll(
      this.#redis
        .multi()
        .del(...keys)
        .srem(registry, ...names),
    );
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
    clearInterval(this.#lossTimer);
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
