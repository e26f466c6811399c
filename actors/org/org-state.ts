// An organization's state: plain data that pure handlers read, changed only by applying writes that the store
// already holds, so memory never runs ahead of the store. Live actor references are not part of it.
import { GroupIndex } from '../../src/auth/acl.js';
import type { OrgCollection } from '../../src/store/collections.js';
import type { ClientDoc, ContainerDoc, GroupDoc, MemberDoc, ObjectDoc, OrgDoc } from '../shared/documents.js';
import { emptyPushData, type PushData } from '../push/push-data.js';
import { emptySearch, indexDoc, type OrgSearch } from './search-indexes.js';

/** The document type of each of an organization's collections. */
export interface OrgCollections {
  clients: ClientDoc;
  groups: GroupDoc;
  containers: ContainerDoc;
  members: MemberDoc;
  nodes: ObjectDoc;
  roles: ObjectDoc;
  environments: ObjectDoc;
  /** Data bags; their items live in `items`, keyed `BAG/ITEM`. */
  data: ObjectDoc;
  items: ObjectDoc;
}

export type OrgState = {
  org: OrgDoc;
  deleted: boolean;
  push: PushData;
  search: OrgSearch;
  /** Who each group lists, by member, kept by applyWrites as `groups` changes. */
  groupIndex: GroupIndex;
} & {
  [K in OrgCollection]: Map<string, OrgCollections[K]>;
};

/** One document to write (`doc`) or remove (`doc: null`). `org` is the organization document itself. */
export type OrgWrite =
  | { [K in Exclude<OrgCollection, 'groups'>]: { coll: K; id: string; doc: OrgCollections[K] | null } }[Exclude<
      OrgCollection,
      'groups'
    >]
  | GroupWrite
  | { coll: 'org'; id: string; doc: OrgDoc | null };

export interface GroupWrite {
  coll: 'groups';
  id: string;
  doc: GroupDoc | null;
  /**
   * Set when `doc` is the group as it was with these clients added at the end of its clients, and nothing else
   * changed: the clients group lists the whole fleet, and comparing it on each registration cost the fleet's size.
   */
  appendedClients?: readonly string[];
}

export function emptyOrgState(org: OrgDoc): OrgState {
  return {
    org,
    deleted: false,
    push: emptyPushData(),
    search: emptySearch(),
    groupIndex: new GroupIndex(),
    clients: new Map(),
    groups: new Map(),
    containers: new Map(),
    members: new Map(),
    nodes: new Map(),
    roles: new Map(),
    environments: new Map(),
    data: new Map(),
    items: new Map(),
  };
}

/** Applies writes the store holds; the search indexes follow. */
export function applyWrites(state: OrgState, writes: readonly OrgWrite[]): void {
  for (const w of writes) {
    if (w.coll === 'org') {
      if (w.doc === null) state.deleted = true;
      else state.org = w.doc;
      continue;
    }
    if (w.coll === 'groups')
      state.groupIndex.update(w.id, state.groups.get(w.id), w.doc ?? undefined, w.appendedClients);
    const target = state[w.coll] as Map<string, unknown>;
    if (w.doc === null) target.delete(w.id);
    else target.set(w.id, w.doc);
    if (
      w.coll === 'nodes' ||
      w.coll === 'roles' ||
      w.coll === 'environments' ||
      w.coll === 'data' ||
      w.coll === 'items'
    )
      indexDoc(state.search, w.coll, w.id, w.doc);
  }
}
