// The persistence port: every actor saves and restores its snapshots through this interface.
// A store holds named collections of JSON documents. Writes touch one document (or one batch of
// documents in one collection), so saving one client or node never rewrites a whole organization.

/** A collection name: slash-separated segments of [a-z0-9_.-], e.g. `orgs` or `org/acme/clients`. */
export type CollectionName = string;

export type StoreState = 'ok' | 'unavailable';

/**
 * One document to write or to remove; or fields of a field map to set (a null value removes its field); or a
 * whole field map to remove.
 */
export type StoreOp =
  | { collection: CollectionName; id: string; doc: unknown }
  | { collection: CollectionName; id: string; remove: true }
  | { collection: CollectionName; id: string; fields: ReadonlyArray<readonly [string, unknown]> }
  | { collection: CollectionName; id: string; removeFields: true };

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
   * Writes the document unless one is stored, and answers the stored one: processes racing to create the same
   * thing (the CurveZMQ key pair) all end up with the first one's.
   */
  putIfAbsent(collection: CollectionName, id: string, doc: unknown): Promise<unknown>;

  /**
   * Writes several documents of one collection (the write-behind path for node states).
   * Each document is written atomically; the batch as a whole need not be.
   */
  putMany(collection: CollectionName, docs: ReadonlyArray<readonly [string, unknown]>): Promise<void>;

  /**
   * Sets fields of one field map: a record made of many small fields, such as a job's per-node statuses. It
   * costs the fields given, not the map's size; a field set twice keeps its last value; a field set to null is
   * removed; the fields of one call land together or not at all. Field maps live beside a collection's documents
   * and are not documents.
   */
  putFields(collection: CollectionName, id: string, fields: ReadonlyArray<readonly [string, unknown]>): Promise<void>;

  /** Every field of one field map; an empty map when there is none. */
  getFields(collection: CollectionName, id: string): Promise<Map<string, unknown>>;

  /** Removes one field map; removing a missing one is not an error. */
  removeFields(collection: CollectionName, id: string): Promise<void>;

  /**
   * Writes and removes several documents and field map fields, possibly of several collections, as one: all land
   * or none does (a reader may see the old documents or the new ones, and after a crash the store holds one or
   * the other).
   */
  apply(ops: readonly StoreOp[]): Promise<void>;

  /** Removes one document; removing a missing one is not an error. */
  remove(collection: CollectionName, id: string): Promise<void>;

  /** Removes `collection`, its field maps, and every collection below it (`org/acme` removes `org/acme/clients`). */
  drop(collection: CollectionName): Promise<void>;

  /**
   * Calls `writeBack` when the store is found to have lost what was written to it (a Redis restarted without its
   * data); the store counts as whole again once the promise it returns resolves. Files lose nothing this way.
   */
  onLost(writeBack: () => Promise<void>): void;

  /** Whether the backing service answers right now. */
  state(): Promise<StoreState>;

  close(): Promise<void>;
}
