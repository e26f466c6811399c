// RedisStore: the persistence port over Redis (one Redis, a Redis Cluster, or a master through Sentinel). Each
// collection is one hash per partition, each field map one hash, and every key carries its partition's hash tag
// (partitions.ts), so every write is one script on one slot: the script checks the writer's lease first
// (fencing.ts), and writes all of its commands or none.
import {
  checkCollection,
  checkPrefix,
  collectionKey,
  encodeDoc,
  fieldMapsKey,
  fieldsKey,
  leaseKey,
  markerKey,
  partitionPrefix,
  registryKey,
} from './layout.js';
import { realTimers, type Timers } from '../lib/timers.js';
import { FencedError, type Fencing } from './fencing.js';
import { partitionOfDoc, partitionsOfCollection, type Partition } from './partitions.js';
import { connectRedis, openRedis, RedisUnavailableError, sentinelsOf, type OpenedRedis } from './redis-connection.js';
import { migrateLayout } from './redis-migrate.js';
import { MASTER_ONLY, waitForReplicas, type Replication } from './redis-replication.js';
import { SentinelFailovers } from './sentinel-failovers.js';
import { isFenced, withScripts, type RedisClient, type ScriptCommands } from './redis-scripts.js';
import type { CollectionName, Store, StoreOp, StoreState } from './store.js';

export { RedisUnavailableError };

const CONNECT_TIMEOUT_MS = 5000;
/** How often the marker is looked for besides each reconnect: a FLUSHALL loses data without a reconnect. */
const LOSS_CHECK_MS = 5000;
const PING_TIMEOUT_MS = 1000;

/** Replicas each write waits for (redis_min_replicas), and how long. */
export interface ReplicaWait {
  minReplicas: number;
  timeoutMs: number;
}

/** Until the server's leases fence it, a store writes nothing. */
const UNFENCED: Fencing = { tokenFor: () => undefined, refused: () => undefined };

export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  readonly #opened: OpenedRedis;
  readonly #redis: RedisClient & ScriptCommands;
  #fencing: Fencing = UNFENCED;
  #replication: Replication = MASTER_ONLY;
  /** Through Sentinel with replicas asked for: the failovers its sentinels announce. */
  #failovers: SentinelFailovers | undefined;
  /** Stops the periodic look for the marker, once onLost started it. */
  #stopLossChecks: (() => void) | undefined;
  #checkLoss: () => Promise<void> = () => Promise.resolve();

  /** `timers`: the loss checks and the PING's bound; Node's unless a test runs the store on a clock of its own. */
  private constructor(
    opened: OpenedRedis,
    readonly keyPrefix: string,
    private readonly timers: Timers,
  ) {
    this.#opened = opened;
    this.#redis = withScripts(opened.redis);
  }

  /**
   * A store whose connection is ready and whose keys are in the current layout (an earlier version's keys are
   * moved first), or a RedisUnavailableError after `timeoutMs`. It writes once `fenceWith` gave it its leases.
   */
  static async connect(
    url: string,
    keyPrefix = 'infra:',
    timeoutMs = CONNECT_TIMEOUT_MS,
    replicas: ReplicaWait = { minReplicas: 0, timeoutMs: 0 },
    timers: Timers = realTimers,
  ): Promise<RedisStore> {
    checkPrefix(keyPrefix);
    const opened = await connectRedis(url, timeoutMs, timers);
    const store = new RedisStore(opened, keyPrefix, timers);
    try {
      // WAIT names no key, so on a Redis Cluster it would reach some node rather than the master of the write's slot.
      if (replicas.minReplicas > 0 && opened.mode === 'cluster')
        throw new RangeError('redis_min_replicas is not supported on a Redis Cluster: set it to 0');
      if (replicas.minReplicas > 0 && opened.mode === 'sentinel') {
        const { sentinels, name } = sentinelsOf(url);
        store.#failovers = new SentinelFailovers(sentinels, name);
      }
      store.#replication = waitForReplicas(opened.redis, replicas.minReplicas, replicas.timeoutMs, store.#failovers);
      await migrateLayout(opened.redis, keyPrefix);
      await opened.redis.set(markerKey(keyPrefix), 'written by infra-server', 'NX');
    } catch (err) {
      store.#failovers?.close();
      opened.redis.disconnect();
      throw err;
    }
    return store;
  }

  /** A store whose connection is tried in the background (state() tells whether it answers). */
  static openLazily(url: string, keyPrefix = 'infra:', timers: Timers = realTimers): RedisStore {
    checkPrefix(keyPrefix);
    return new RedisStore(openRedis(url), keyPrefix, timers);
  }

  /** The connection, with the scripts defined on it: the cluster's leases and members share it. */
  get redis(): RedisClient & ScriptCommands {
    return this.#redis;
  }

  get mode(): OpenedRedis['mode'] {
    return this.#opened.mode;
  }

  /** The replicas each write waits for; the cluster's own writes between members wait for them too. */
  get replication(): Replication {
    return this.#replication;
  }

  /** From now on every write of a partition carries the token `fencing` holds for it. */
  fenceWith(fencing: Fencing): void {
    this.#fencing = fencing;
  }

  /**
   * Watches the marker: on each reconnect, every LOSS_CHECK_MS, and when the leases found a partition's data gone
   * (checkLoss). `writeBack` takes the leases again first: they fence its writes.
   */
  onLost(writeBack: () => Promise<void>): void {
    let busy = false;
    const redis = this.#redis;
    this.#checkLoss = async () => {
      if (busy || redis.status !== 'ready') return;
      busy = true;
      try {
        if ((await redis.exists(markerKey(this.keyPrefix))) === 0) {
          await writeBack();
          await redis.set(markerKey(this.keyPrefix), 'written by infra-server');
        }
      } catch {
        // Looked for again at the next check.
      } finally {
        busy = false;
      }
    };
    redis.on('ready', () => void this.checkLoss());
    this.#stopLossChecks = this.timers.every(LOSS_CHECK_MS, () => void this.checkLoss(), { unref: true });
  }

  /** Looks for the marker now (the leases found a partition's data gone). */
  checkLoss(): Promise<void> {
    return this.#checkLoss();
  }

  /** HGETALL of the collection's hash, in every partition its documents may be in. */
  async load(collection: CollectionName): Promise<Map<string, unknown>> {
    checkCollection(collection);
    const docs = new Map<string, unknown>();
    const parts = await Promise.all(
      partitionsOfCollection(collection).map(async (p) => {
        const key = collectionKey(this.keyPrefix, p, collection);
        return [key, await this.#redis.hgetall(key)] as const;
      }),
    );
    for (const [key, fields] of parts)
      for (const [id, json] of Object.entries(fields)) docs.set(id, decode(json, key, id));
    return docs;
  }

  /** The ids of a collection's documents in one partition (the organizations a partition holds, for one). */
  async idsIn(collection: CollectionName, partition: Partition): Promise<string[]> {
    checkCollection(collection);
    return this.#redis.hkeys(collectionKey(this.keyPrefix, partition, collection));
  }

  /** HGET of one field of the collection's hash; undefined when absent. */
  async get(collection: CollectionName, id: string): Promise<unknown> {
    checkCollection(collection);
    const key = collectionKey(this.keyPrefix, partitionOfDoc(collection, id), collection);
    const json = await this.#redis.hget(key, id);
    return json === null ? undefined : decode(json, key, id);
  }

  async put(collection: CollectionName, id: string, doc: unknown): Promise<void> {
    await this.apply([{ collection, id, doc }]);
  }

  async putMany(collection: CollectionName, docs: ReadonlyArray<readonly [string, unknown]>): Promise<void> {
    await this.apply(docs.map(([id, doc]) => ({ collection, id, doc })));
  }

  async putFields(
    collection: CollectionName,
    id: string,
    fields: ReadonlyArray<readonly [string, unknown]>,
  ): Promise<void> {
    if (fields.length > 0) await this.apply([{ collection, id, fields }]);
  }

  /** HGETALL of the field map's hash. */
  async getFields(collection: CollectionName, id: string): Promise<Map<string, unknown>> {
    checkCollection(collection);
    const key = fieldsKey(this.keyPrefix, partitionOfDoc(collection, id), collection, id);
    const fields = new Map<string, unknown>();
    for (const [field, json] of Object.entries(await this.#redis.hgetall(key)))
      fields.set(field, decode(json, key, field));
    return fields;
  }

  async removeFields(collection: CollectionName, id: string): Promise<void> {
    await this.apply([{ collection, id, removeFields: true }]);
  }

  async remove(collection: CollectionName, id: string): Promise<void> {
    await this.apply([{ collection, id, remove: true }]);
  }

  /**
   * One fenced script per partition the ops touch: the ops of one partition land all or none. Every write of the
   * server keeps to one partition (an organization's, or the global one), so for it the whole call is atomic.
   */
  async apply(ops: readonly StoreOp[]): Promise<void> {
    const byPartition = new Map<Partition, ScriptBuilder>();
    for (const op of ops) {
      checkCollection(op.collection);
      const p = partitionOfDoc(op.collection, op.id);
      let script = byPartition.get(p);
      if (!script) byPartition.set(p, (script = new ScriptBuilder(this.keyPrefix, p)));
      script.add(op);
    }
    await Promise.all([...byPartition].map(([p, script]) => (script.empty ? undefined : this.#run(p, script))));
    await this.#replication.confirm();
  }

  /** Removes the collection and everything below it, in each partition it may have documents in. */
  async drop(collection: CollectionName): Promise<void> {
    checkCollection(collection);
    await Promise.all(
      partitionsOfCollection(collection).map((p) =>
        this.#fenced(p, (token) =>
          this.#redis.fencedDrop(
            leaseKey(this.keyPrefix, p),
            registryKey(this.keyPrefix, p),
            token,
            partitionPrefix(this.keyPrefix, p),
            collection,
          ),
        ),
      ),
    );
    await this.#replication.confirm();
  }

  /** Writes the document unless one is stored; answers the stored one. Needs no lease (see createDoc). */
  async putIfAbsent(collection: CollectionName, id: string, doc: unknown): Promise<unknown> {
    checkCollection(collection);
    const p = partitionOfDoc(collection, id);
    const key = collectionKey(this.keyPrefix, p, collection);
    const json = await this.#redis.createDoc(key, registryKey(this.keyPrefix, p), id, encodeDoc(doc), collection);
    await this.#replication.confirm();
    return decode(json, key, id);
  }

  /** PING answered within PING_TIMEOUT_MS. */
  async state(): Promise<StoreState> {
    if (this.#redis.status === 'end') return 'unavailable';
    const ping = this.#redis.ping().then(
      (reply) => reply === 'PONG',
      () => false,
    );
    let cancel: (() => void) | undefined;
    const late = new Promise<false>((resolve) => {
      cancel = this.timers.after(PING_TIMEOUT_MS, () => resolve(false));
    });
    const ok = await Promise.race([ping, late]);
    cancel?.();
    return ok ? 'ok' : 'unavailable';
  }

  /** QUIT when connected (pending replies arrive first), otherwise drops the connection attempt. */
  async close(): Promise<void> {
    this.#stopLossChecks?.();
    this.#failovers?.close();
    const redis = this.#redis;
    if (redis.status === 'end') return;
    if (redis.status !== 'ready') {
      redis.disconnect();
      return;
    }
    await redis.quit().catch(() => redis.disconnect());
  }

  #run(p: Partition, script: ScriptBuilder): Promise<unknown> {
    return this.#fenced(p, (token) => this.#redis.fencedWrite(script.keys, [token, ...script.args]));
  }

  /** Runs a fenced script under this process's token for the partition; a refusal becomes a FencedError. */
  async #fenced<T>(p: Partition, run: (token: string) => Promise<T>): Promise<T> {
    const token = this.#fencing.tokenFor(p);
    if (token === undefined) throw new FencedError(p);
    try {
      return await run(token);
    } catch (e) {
      if (!isFenced(e)) throw e;
      this.#fencing.refused(p, token);
      throw new FencedError(p);
    }
  }
}

/** The keys and flat arguments of one fenced write (see FENCED_WRITE in redis-scripts.ts). */
class ScriptBuilder {
  readonly keys: string[];
  readonly args: Array<string | number> = [];
  readonly #index = new Map<string, number>();
  readonly #registered = new Set<string>();
  #empty = true;

  constructor(
    private readonly prefix: string,
    private readonly partition: Partition,
  ) {
    this.keys = [leaseKey(prefix, partition)];
  }

  get empty(): boolean {
    return this.#empty;
  }

  add(op: StoreOp): void {
    const { prefix, partition } = this;
    const { collection, id } = op;
    if ('fields' in op) {
      if (op.fields.length === 0) return;
      this.#register(collection);
      this.#command('S', fieldMapsKey(prefix, partition, collection), [id]);
      const key = fieldsKey(prefix, partition, collection, id);
      const set = new Map<string, string>();
      const removed: string[] = [];
      for (const [field, value] of op.fields) {
        if (value === null) {
          set.delete(field);
          removed.push(field);
        } else set.set(field, encodeDoc(value));
      }
      // Removals first: a field removed then set again in one call ends set.
      const gone = removed.filter((f) => !set.has(f));
      if (gone.length > 0) this.#command('D', key, gone);
      if (set.size > 0) this.#command('H', key, [...set].flat());
    } else if ('removeFields' in op) {
      this.#command('X', fieldsKey(prefix, partition, collection, id), []);
      this.#command('R', fieldMapsKey(prefix, partition, collection), [id]);
    } else if ('remove' in op) this.#command('D', collectionKey(prefix, partition, collection), [id]);
    else {
      this.#register(collection);
      this.#command('H', collectionKey(prefix, partition, collection), [id, encodeDoc(op.doc)]);
    }
  }

  #register(collection: CollectionName): void {
    if (this.#registered.has(collection)) return;
    this.#registered.add(collection);
    this.#command('S', registryKey(this.prefix, this.partition), [collection]);
  }

  #command(code: 'H' | 'D' | 'X' | 'S' | 'R', key: string, values: readonly string[]): void {
    let index = this.#index.get(key);
    if (index === undefined) {
      this.keys.push(key);
      index = this.keys.length;
      this.#index.set(key, index);
    }
    const width = code === 'H' ? 2 : 1;
    this.args.push(code, index, values.length / width);
    // One at a time: a spread of 100,000 node states would pass the engine's limit on arguments.
    for (const v of values) this.args.push(v);
    this.#empty = false;
  }
}

function decode(json: string, key: string, id: string): unknown {
  try {
    return JSON.parse(json);
  } catch (err) {
    throw new Error(`corrupt document ${JSON.stringify(id)} in ${key}`, { cause: err });
  }
}
