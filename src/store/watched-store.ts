// The store as the server uses it: every operation but a whole-collection load bounded by store_timeout, and the store's health followed from
// their outcomes. An operation that takes longer is refused with StoreUnavailableError (requests answer 503 at
// once rather than hang through an outage), and the server counts as degraded from a failed operation until the
// next one succeeds. Writes are timed for the metrics listener when it is on.
import { realTimers, type Timers } from '../lib/timers.js';
import type { CollectionName, Store, StoreOp, StoreState } from './store.js';

export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

export type StoreWriteOp = 'put' | 'putMany' | 'putFields' | 'removeFields' | 'apply' | 'remove' | 'drop';

/** `failure`: null when the write succeeded, `timeout` past store_timeout, else `error`. */
export type StoreWriteObserver = (op: StoreWriteOp, seconds: number, failure: 'timeout' | 'error' | null) => void;

export interface WatchedStoreOptions {
  now?: () => number;
  observeWrite?: StoreWriteObserver;
  /** What bounds each operation and times each write; Node's unless a test runs the store on a clock of its own. */
  timers?: Timers;
}

export class WatchedStore implements Store {
  readonly kind: Store['kind'];
  /** When the store began failing; null while it works. */
  #failingSince: number | null = null;
  /** When a write-back of what the store lost began, while it runs. */
  #writingBackSince: number | null = null;

  private readonly now: () => number;
  private readonly observeWrite: StoreWriteObserver | undefined;
  private readonly timers: Timers;

  constructor(
    private readonly inner: Store,
    private readonly timeoutMs: number,
    opts: WatchedStoreOptions = {},
  ) {
    this.kind = inner.kind;
    this.now = opts.now ?? Date.now;
    this.observeWrite = opts.observeWrite;
    this.timers = opts.timers ?? realTimers;
  }

  /** Since when operations fail (or time out) or the store is being written back, or null while it is whole. */
  get failingSince(): number | null {
    return this.#writingBackSince ?? this.#failingSince;
  }

  /**
   * Whole collections are read at start-up only, where their size (100,000 job headers) sets the time they take:
   * a load is not bounded, and a store that cannot answer fails it on its own (Redis without an offline queue).
   */
  async load(collection: CollectionName): Promise<Map<string, unknown>> {
    try {
      const loaded = await this.inner.load(collection);
      this.#failingSince = null;
      return loaded;
    } catch (e) {
      this.#failingSince ??= this.now();
      throw e;
    }
  }

  get(collection: CollectionName, id: string): Promise<unknown> {
    return this.#bounded('get', () => this.inner.get(collection, id));
  }

  put(collection: CollectionName, id: string, doc: unknown): Promise<void> {
    return this.#write('put', () => this.inner.put(collection, id, doc));
  }

  putIfAbsent(collection: CollectionName, id: string, doc: unknown): Promise<unknown> {
    return this.#write('put', () => this.inner.putIfAbsent(collection, id, doc));
  }

  putMany(collection: CollectionName, docs: ReadonlyArray<readonly [string, unknown]>): Promise<void> {
    return this.#write('putMany', () => this.inner.putMany(collection, docs));
  }

  putFields(collection: CollectionName, id: string, fields: ReadonlyArray<readonly [string, unknown]>): Promise<void> {
    return this.#write('putFields', () => this.inner.putFields(collection, id, fields));
  }

  getFields(collection: CollectionName, id: string): Promise<Map<string, unknown>> {
    return this.#bounded('getFields', () => this.inner.getFields(collection, id));
  }

  removeFields(collection: CollectionName, id: string): Promise<void> {
    return this.#write('removeFields', () => this.inner.removeFields(collection, id));
  }

  apply(ops: readonly StoreOp[]): Promise<void> {
    return this.#write('apply', () => this.inner.apply(ops));
  }

  remove(collection: CollectionName, id: string): Promise<void> {
    return this.#write('remove', () => this.inner.remove(collection, id));
  }

  drop(collection: CollectionName): Promise<void> {
    return this.#write('drop', () => this.inner.drop(collection));
  }

  /** The store counts as failing while the write-back runs: what it answers is not whole before. */
  onLost(writeBack: () => Promise<void>): void {
    this.inner.onLost(async () => {
      this.#writingBackSince ??= this.now();
      try {
        await writeBack();
      } finally {
        this.#writingBackSince = null;
      }
    });
  }

  /** The store's own check; one that answers ends a failing spell as a successful operation would. */
  async state(): Promise<StoreState> {
    const state = await this.inner.state();
    if (state === 'ok') this.#failingSince = null;
    return state;
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** A bounded write, timed when someone observes writes. */
  async #write<T>(what: StoreWriteOp, op: () => Promise<T>): Promise<T> {
    const observe = this.observeWrite;
    if (observe === undefined) return this.#bounded(what, op);
    const started = this.timers.now();
    try {
      const value = await this.#bounded(what, op);
      observe(what, (this.timers.now() - started) / 1000, null);
      return value;
    } catch (e) {
      observe(what, (this.timers.now() - started) / 1000, e instanceof StoreUnavailableError ? 'timeout' : 'error');
      throw e;
    }
  }

  async #bounded<T>(what: string, op: () => Promise<T>): Promise<T> {
    let cancel: (() => void) | undefined;
    const late = new Promise<never>((_, reject) => {
      cancel = this.timers.after(this.timeoutMs, () =>
        reject(new StoreUnavailableError(`the store did not answer ${what} within ${this.timeoutMs} ms`)),
      );
    });
    try {
      const value = await Promise.race([op(), late]);
      this.#failingSince = null;
      return value;
    } catch (e) {
      // Refusals of the caller's own input (a bad collection name, a document JSON cannot hold) say nothing of
      // the store's health.
      if (!(e instanceof RangeError || e instanceof TypeError)) this.#failingSince ??= this.now();
      throw e;
    } finally {
      cancel?.();
    }
  }
}
