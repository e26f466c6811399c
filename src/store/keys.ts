// Store layout: the collection-name rule and document encoding both stores share, and every Redis key name.
import type { CollectionName } from './store.js';

const SEGMENT = /^[a-z0-9_.-]+$/;

/**
 * Throws a RangeError unless `collection` follows the rule in store.ts: slash-separated segments of
 * [a-z0-9_.-]. `.` and `..` are refused so a file store cannot leave its root, and a segment ending
 * in `.json` is refused so a collection folder never shares a name with a document file.
 */
export function checkCollection(collection: CollectionName): void {
  const segments = collection.split('/');
  const bad = segments.find((s) => !SEGMENT.test(s) || s === '.' || s === '..' || s.endsWith('.json'));
  if (bad !== undefined) {
    throw new RangeError(`invalid collection name ${JSON.stringify(collection)}`);
  }
}

/** Whether `name` is `collection` itself or a collection below it (`org/a/x` but not `org/ab`). */
export function isWithin(name: CollectionName, collection: CollectionName): boolean {
  return name === collection || name.startsWith(`${collection}/`);
}

/** A document as stored: compact JSON. Throws a TypeError for values JSON cannot hold (`undefined`, functions). */
export function encodeDoc(doc: unknown): string {
  const json: string | undefined = JSON.stringify(doc);
  if (json === undefined) throw new TypeError('document is not a JSON value');
  return json;
}

/** Hash holding one collection: field = document id, value = the document as JSON. */
export function collectionKey(prefix: string, collection: CollectionName): string {
  return `${prefix}c:${collection}`;
}

/** Hash holding one field map of a collection: field = the map's field, value = its value as JSON. */
export function fieldsKey(prefix: string, collection: CollectionName, id: string): string {
  return `${prefix}f:${collection}:${id}`;
}

/** Set of the ids of a collection's field maps, so drop finds them without SCAN. */
export function fieldMapsKey(prefix: string, collection: CollectionName): string {
  return `${prefix}fm:${collection}`;
}

/**
 * Written once when a server first uses the prefix and checked afterwards: missing, it says Redis lost its data
 * (restarted without persistence, or flushed) while the server held it in memory.
 */
export function markerKey(prefix: string): string {
  return `${prefix}marker`;
}

/** Set of every collection name written through this prefix, so drop finds sub-collections without SCAN. */
export function registryKey(prefix: string): string {
  return `${prefix}collections`;
}
