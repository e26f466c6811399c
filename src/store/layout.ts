// Store layout: the collection-name rule and document encoding both stores share, and every Redis key name.
// Every Redis key carries its partition's hash tag (partitions.ts).
import { hashTag, partitionOf, type Partition } from './partitions.js';
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

/**
 * Every key of a partition starts with this: the prefix, then the partition's hash tag, so Redis Cluster keeps
 * them in one slot and one script may touch any of them.
 */
export function partitionPrefix(prefix: string, partition: Partition): string {
  return `${prefix}${hashTag(partition)}:`;
}

/** Hash holding one collection's documents of one partition: field = document id, value = the document as JSON. */
export function collectionKey(prefix: string, partition: Partition, collection: CollectionName): string {
  return `${partitionPrefix(prefix, partition)}c:${collection}`;
}

/** Hash holding one field map of a collection: field = the map's field, value = its value as JSON. */
export function fieldsKey(prefix: string, partition: Partition, collection: CollectionName, id: string): string {
  return `${partitionPrefix(prefix, partition)}f:${collection}:${id}`;
}

/** Set of the ids of a collection's field maps, so drop finds them without SCAN. */
export function fieldMapsKey(prefix: string, partition: Partition, collection: CollectionName): string {
  return `${partitionPrefix(prefix, partition)}fm:${collection}`;
}

/** Set of every collection name written in a partition, so drop finds sub-collections without SCAN. */
export function registryKey(prefix: string, partition: Partition): string {
  return `${partitionPrefix(prefix, partition)}collections`;
}

/** The partition's lease: the token of the process that owns it, with a time to live (src/cluster/leases.ts). */
export function leaseKey(prefix: string, partition: Partition): string {
  return `${partitionPrefix(prefix, partition)}lease`;
}

/**
 * The partition's fencing epoch, raised by every new lease and never expiring: missing, it says Redis lost the
 * partition's data.
 */
export function epochKey(prefix: string, partition: Partition): string {
  return `${partitionPrefix(prefix, partition)}epoch`;
}

/** Hash of the live members' descriptions, by member id (src/cluster/members.ts). */
export function membersKey(prefix: string): string {
  return `${partitionPrefix(prefix, 'global')}members`;
}

/**
 * Sorted set of member ids scored by when each member's registration runs out (Redis's own clock, ms). The global
 * partition's is every member's registration; on a Redis Cluster each partition has one too, in its own slot, where
 * its holder renews itself (src/cluster/leases.ts), so that a failover of one slot's master stops no other partition.
 */
export function memberExpiryKey(prefix: string, partition: Partition = 'global'): string {
  return `${partitionPrefix(prefix, partition)}member-expiry`;
}

/** When Redis last heard a registration of that set renewed (its own clock, ms): see MEMBER_BEAT. */
export function memberHeardKey(prefix: string, partition: Partition = 'global'): string {
  return `${partitionPrefix(prefix, partition)}member-heard`;
}

/**
 * Written once when a server first uses the prefix and checked afterwards: missing, it says Redis lost its data
 * (restarted without persistence, or flushed) while the server held it in memory.
 */
export function markerKey(prefix: string): string {
  return `${partitionPrefix(prefix, 'global')}marker`;
}

/** The key layout's version under this prefix: `2` once keys carry partition hash tags (redis-migrate.ts). */
export function layoutKey(prefix: string): string {
  return `${partitionPrefix(prefix, 'global')}layout`;
}

/**
 * The pub/sub channel of the processes on this prefix (src/cluster/bus.ts): hints that something changed, never the
 * record. Tagged like the global keys, though Redis Cluster broadcasts a PUBLISH to every node whatever its name.
 */
export function busChannel(prefix: string): string {
  return `${partitionPrefix(prefix, 'global')}bus`;
}

/**
 * A dashboard sign-in (src/http/ui/redis-sign-ins.ts), named by the hash of its session id, with the session's time
 * to live: every process reads it, so a sign-in through one works on all and a sign-out ends it on all.
 */
export function uiSessionKey(prefix: string, digest: string): string {
  return `${partitionPrefix(prefix, 'global')}ui:session:${digest}`;
}

/**
 * The dashboard's failed sign-ins for one name or address (`user:olga`): their count, forgotten a while after the
 * last, and the wait they impose, a key that lives as long as the wait.
 */
export function signInKeys(prefix: string, counted: string): { failures: string; wait: string } {
  const base = `${partitionPrefix(prefix, 'global')}ui:sign-in:`;
  return { failures: `${base}failures:${counted}`, wait: `${base}wait:${counted}` };
}

/** Keys of the first layout (no hash tags), read once to migrate a store written by an earlier version. */
export const LEGACY = {
  collection: (prefix: string, collection: CollectionName) => `${prefix}c:${collection}`,
  fields: (prefix: string, collection: CollectionName, id: string) => `${prefix}f:${collection}:${id}`,
  fieldMaps: (prefix: string, collection: CollectionName) => `${prefix}fm:${collection}`,
  registry: (prefix: string) => `${prefix}collections`,
  marker: (prefix: string) => `${prefix}marker`,
};

/** Throws a RangeError for a key prefix with a brace: it would take the place of the partitions' hash tags. */
export function checkPrefix(prefix: string): void {
  if (/[{}]/.test(prefix)) throw new RangeError(`invalid Redis key prefix ${JSON.stringify(prefix)}: no braces`);
}

/**
 * A partition's inbox (a Redis Stream): what the gateways heard from the partition's nodes that its owner must
 * apply (src/cluster/node-link.ts). Read by the consumer group `INBOX_GROUP`, so a new owner claims what the last
 * one read but never acknowledged.
 */
export function inboxKey(prefix: string, partition: Partition): string {
  return `${partitionPrefix(prefix, partition)}inbox`;
}

/**
 * An organization's recent feed events (a Redis Stream, src/feeds/redis-org-feed.ts), written by its owner and read
 * by the next one, so that a feed's reader resumes across a change of owner. In the organization's partition.
 */
export function orgFeedKey(prefix: string, org: string): string {
  return `${partitionPrefix(prefix, partitionOf(org))}feed:${org}`;
}

/** The consumer group of the partitions' inboxes: the partition's owner at any time, each under its member id. */
export const INBOX_GROUP = 'owners';

/**
 * A gateway's stream: the job messages owners hand it for the nodes connected to it. Tagged by member, so it sits
 * in a slot of its own in a Redis Cluster.
 */
export function gatewayKey(prefix: string, member: string): string {
  return `${prefix}{m:${member}}:gateway`;
}
