// Which partition each document belongs to. Organizations map to a fixed number of partitions by a hash of their
// name; a partition is the unit one server process owns (a lease), fences its writes under, and Redis Cluster
// keeps in one slot (every key of a partition carries its hash tag). Accounts and server-wide documents sit in a
// global partition of their own.
import type { CollectionName } from './store.js';

/**
 * How many partitions organizations are spread over. Fixed: every process of a cluster must agree on it, and
 * changing it would move organizations between hash tags.
 */
export const PARTITIONS = 64;

/** A partition: the global one, or an organization partition's number. */
export type Partition = 'global' | number;

/** Every partition, the global one first. */
export const ALL_PARTITIONS: readonly Partition[] = ['global', ...Array.from({ length: PARTITIONS }, (_, i) => i)];

/** The partition an organization's documents live in: FNV-1a over the name's UTF-8 bytes. */
export function partitionOf(org: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(org, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % PARTITIONS;
}

/**
 * The partition of one document. `orgs` (the organization documents) is spread by document id, so that an
 * organization's own document lives beside its data and its creation is one write of one partition; so is `org`,
 * the parent of every organization's collections, whose documents would be named by organization.
 */
export function partitionOfDoc(collection: CollectionName, id: string): Partition {
  if (collection === 'orgs' || collection === 'org') return partitionOf(id);
  return partitionOfCollection(collection) ?? 'global';
}

/**
 * The partition holding every document of a collection, or undefined when its documents are spread over the
 * organization partitions (`orgs`, and `org` itself, the root of every organization).
 */
export function partitionOfCollection(collection: CollectionName): Partition | undefined {
  if (collection === 'orgs' || collection === 'org') return undefined;
  if (collection.startsWith('org/')) {
    const end = collection.indexOf('/', 4);
    return partitionOf(collection.slice(4, end === -1 ? undefined : end));
  }
  return 'global';
}

/** The partitions a whole collection may have documents in. */
export function partitionsOfCollection(collection: CollectionName): readonly Partition[] {
  const one = partitionOfCollection(collection);
  return one === undefined ? ALL_PARTITIONS.filter((p) => p !== 'global') : [one];
}

/** The Redis Cluster hash tag of a partition: `{g}` or `{p17}`. */
export function hashTag(partition: Partition): string {
  return partition === 'global' ? '{g}' : `{p${partition}}`;
}

/** How a partition is named in logs, status and errors. */
export function partitionName(partition: Partition): string {
  return partition === 'global' ? 'global' : `p${partition}`;
}
