// How a group is stored: its document without its members, and beside it a field map with one field per member
// (`c:NAME` for a client, `u:` a user, `g:` a group) holding the member's place in its list. The clients group of
// a large organization lists every client: stored as one document, registering a client rewrote the whole fleet's
// names, so registering N clients wrote O(N²) bytes. As fields, it writes one.
import { isAppend } from '../../src/auth/acl.js';
import type { CollectionName, StoreOp } from '../../src/store/store.js';
import type { GroupDoc } from '../shared/documents.js';

const KINDS = [
  ['users', 'u:'],
  ['clients', 'c:'],
  ['groups', 'g:'],
] as const;

type Member = readonly [field: string, place: number | null];

/**
 * The next free place in each group's lists. Places only grow, so a member added after others left still sorts
 * after those that stayed, and nobody else's place is ever rewritten for it.
 */
export class MemberPlaces {
  private readonly next = new Map<string, number>();

  /** `count` fresh places for group `id`, in order. */
  take(id: string, count: number): number {
    const first = this.next.get(id) ?? 0;
    this.next.set(id, first + count);
    return first;
  }

  /** A stored place of group `id` is in use. */
  seen(id: string, place: number): void {
    if (place >= (this.next.get(id) ?? 0)) this.next.set(id, place + 1);
  }
}

/** The store operations that turn group `id` from `before` (absent: not stored) into `after` (null: removed). */
export function groupOps(
  collection: CollectionName,
  id: string,
  before: GroupDoc | undefined,
  after: GroupDoc | null,
  places: MemberPlaces,
  appendedClients?: readonly string[],
): StoreOp[] {
  if (after === null)
    return [
      { collection, id, remove: true },
      { collection, id, removeFields: true },
    ];
  const doc: GroupDoc = { ...after, users: [], clients: [], groups: [] };
  const ops: StoreOp[] = [{ collection, id, doc }];
  // Not stored before: whatever fields an earlier group of that name left are dropped with it.
  if (before === undefined) ops.push({ collection, id, removeFields: true });
  // A hint that fits spares comparing a list the size of the fleet; the other lists are unchanged.
  const appended = appendedClients && before && isAppend(before, after, appendedClients) ? appendedClients : null;
  const fields: Member[] = [];
  for (const [kind, prefix] of KINDS) {
    const members =
      kind === 'clients' && appended
        ? fresh(appended, id, places)
        : listOps(before?.[kind] ?? [], after[kind], id, places);
    for (const [name, place] of members) fields.push([prefix + name, place]);
  }
  if (fields.length > 0) ops.push({ collection, id, fields });
  return ops;
}

/**
 * Which names of a member list to store and where. A list that grew at its end, or lost names and perhaps gained
 * some at its end, writes only those; a list reordered writes all its names again, in their new order.
 */
function listOps(before: readonly string[], after: readonly string[], id: string, places: MemberPlaces): Member[] {
  if (before === after) return [];
  let same = 0;
  const shorter = Math.min(before.length, after.length);
  while (same < shorter && before[same] === after[same]) same += 1;
  if (same === before.length) return fresh(after.slice(same), id, places);
  const was = new Set(before);
  const is = new Set(after);
  const gone: Member[] = before.filter((n) => !is.has(n)).map((n) => [n, null]);
  const keptBefore = before.filter((n) => is.has(n));
  const inOrder =
    keptBefore.every((n, i) => after[i] === n) && after.slice(keptBefore.length).every((n) => !was.has(n));
  return [...gone, ...fresh(inOrder ? after.slice(keptBefore.length) : after, id, places)];
}

/** `names` at fresh places of group `id`, in order. */
function fresh(names: readonly string[], id: string, places: MemberPlaces): Member[] {
  const first = places.take(id, names.length);
  return names.map((name, i) => [name, first + i]);
}

/**
 * Group `doc` as loaded, with its stored members: those its document still lists (as stored before members were
 * fields) first, then the fields by place. Records every place in use.
 */
export function withMembers(doc: GroupDoc, fields: ReadonlyMap<string, unknown>, places: MemberPlaces): GroupDoc {
  const lists = { users: [...doc.users], clients: [...doc.clients], groups: [...doc.groups] };
  const byPlace: Array<[kind: keyof typeof lists, name: string, place: number]> = [];
  for (const [field, place] of fields) {
    const kind = KINDS.find(([, prefix]) => field.startsWith(prefix));
    if (!kind || typeof place !== 'number' || !Number.isSafeInteger(place)) {
      throw new Error(`group ${doc.name}: the stored member field '${field}' is not a member's place`);
    }
    byPlace.push([kind[0], field.slice(kind[1].length), place]);
    places.seen(doc.name, place);
  }
  byPlace.sort((a, b) => a[2] - b[2] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  for (const [kind, name] of byPlace) lists[kind].push(name);
  return { ...doc, ...lists };
}

/** A group stored before members were fields: the operations that move its members to fields. */
export function migrationOps(
  collection: CollectionName,
  id: string,
  stored: GroupDoc,
  loaded: GroupDoc,
  places: MemberPlaces,
): StoreOp[] {
  if (stored.users.length + stored.clients.length + stored.groups.length === 0) return [];
  const emptied: GroupDoc = { ...stored, users: [], clients: [], groups: [] };
  // Every name again at the end, in the loaded order: the places already in use all come before.
  return groupOps(collection, id, emptied, loaded, places);
}
