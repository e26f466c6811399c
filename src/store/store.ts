// The persistence port: every actor saves and restores its snapshots through this interface.
// A store holds named collections of JSON documents. Writes touch one document (or one batch of
// documents in one collection), so saving one client or node never rewrites a whole organization.

/** A collection name: slash-separated segments of [a-z0-9_.-], e.g. `orgs` or `org/acme/clients`. */
export type CollectionName = string;

export type StoreState = 'ok' | 'unavailable';

export interface Store {
  /** `file` or `redis`: shown by GET /_status. */
  readonly kind: 'file' | 'redis';

  /** Every document of `collection` (an empty map when the collection does not exist). */
  load(collection: CollectionName): Promise<Map<string, unknown>>;

  /** One document, or undefined. */
  get(collection: CollectionName, id: string): Promise<unknown>;

  /** Writes one document atomically: a reader sees the old or the new document, never a mix. */
  put(collection: CollectionName, id: string, doc: unknown): Promise<void>;

  /**
   * Writes several documents of one collection (the write-behind path for node states).
   * Each document is written atomically; the batch as a whole need not be.
   */
  putMany(collection: CollectionName, docs: ReadonlyArray<readonly [string, unknown]>): Promise<void>;

  /** Removes one document; removing a missing one is not an error. */
  remove(collection: CollectionName, id: string): Promise<void>;

  /** Removes `collection` and every collection below it (`org/acme` removes `org/acme/clients`). */
  drop(collection: CollectionName): Promise<void>;

  /** Whether the backing service answers right now. */
  state(): Promise<StoreState>;

  close(): Promise<void>;
}
