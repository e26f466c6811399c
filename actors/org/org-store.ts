// An organization in the store: restoring it (every document checked against its schema) and persisting a
// list of writes, grouped per collection so a batch costs one round trip per collection.
import { isFinished } from '../../src/push/job-states.js';
import type { z } from 'zod';
import {
  NODE_STATES_MAP,
  nodeStatesCollection,
  ORG_COLLECTIONS,
  orgCollection,
  ORGS,
  schedulesCollection,
  type OrgCollection,
} from '../../src/store/collections.js';
import type { Store, StoreOp } from '../../src/store/store.js';
import {
  clientDocSchema,
  containerDocSchema,
  groupDocSchema,
  type GroupDoc,
  memberDocSchema,
  objectDocSchema,
  orgDocSchema,
  parseDoc,
} from '../shared/documents.js';
import type { JobState } from '../push/job-model.js';
import { loadJobHeaders, withNodes } from '../push/job-store.js';
import { storedNodeRecordSchema } from '../push/push-data.js';
import { scheduleStateSchema } from '../push/schedule-machine.js';
import { groupOps, MemberPlaces, migrationOps, withMembers } from './group-store.js';
import { applyWrites, emptyOrgState, type OrgCollections, type OrgState, type OrgWrite } from './org-state.js';

const SCHEMAS: { [K in OrgCollection]: z.ZodType<OrgCollections[K]> } = {
  clients: clientDocSchema,
  groups: groupDocSchema,
  containers: containerDocSchema,
  members: memberDocSchema,
  nodes: objectDocSchema,
  roles: objectDocSchema,
  environments: objectDocSchema,
  data: objectDocSchema,
  items: objectDocSchema,
};

export interface LoadedOrg {
  state: OrgState;
  /** Jobs in flight when the server stopped, to resume once the organization's actor runs. */
  inFlight: JobState[];
  /** Where group members are stored, for the writes to come. */
  places: MemberPlaces;
}

/** Restores one organization; a document that fails its schema stops the server naming its collection and id. */
export async function loadOrg(store: Store, rawOrg: unknown): Promise<LoadedOrg> {
  const org = parseDoc(orgDocSchema, rawOrg, ORGS, '?');
  const state = emptyOrgState(org);
  const places = new MemberPlaces();
  const migrations: StoreOp[] = [];
  for (const coll of ORG_COLLECTIONS) {
    const name = orgCollection(org.name, coll);
    const schema: z.ZodType<OrgCollections[typeof coll]> = SCHEMAS[coll];
    const writes: OrgWrite[] = [];
    for (const [id, raw] of await store.load(name)) {
      const doc = parseDoc(schema, raw, name, id);
      if (coll === 'groups') {
        const stored = doc as OrgCollections['groups'];
        const loaded = withMembers(stored, await store.getFields(name, id), places);
        migrations.push(...migrationOps(name, id, stored, loaded, places));
        writes.push({ coll, id, doc: loaded });
      } else writes.push({ coll, id, doc } as OrgWrite);
    }
    applyWrites(state, writes);
  }
  await store.apply(migrations);
  const inFlight: JobState[] = [];
  for (const header of await loadJobHeaders(store, org.name)) {
    state.push.headers.set(header.id, header);
    if (!isFinished(header.status)) inFlight.push(await withNodes(store, org.name, header));
  }
  const schedules = schedulesCollection(org.name);
  for (const [name, raw] of await store.load(schedules))
    state.push.schedules.set(name, parseDoc(scheduleStateSchema, raw, schedules, name));
  const records = nodeStatesCollection(org.name);
  // Documents first (earlier versions wrote one per node), then the field map that replaced them.
  const saved = [...(await store.load(records)), ...(await store.getFields(records, NODE_STATES_MAP))];
  for (const [id, raw] of saved) {
    // A node up when the server stopped counts as available until its silence says otherwise, so jobs
    // in flight can resume with clients that kept running (spec 3.3).
    const record = parseDoc(storedNodeRecordSchema, raw, records, id);
    state.push.records.set(id, { ...record, available: record.status === 'up' });
  }
  return { state, inFlight, places };
}

/** Every document the organization holds, as writes: what a store that lost them gets back. */
export function allWrites(state: OrgState): OrgWrite[] {
  const writes: OrgWrite[] = [{ coll: 'org', id: state.org.name, doc: state.org }];
  for (const coll of ORG_COLLECTIONS) {
    for (const [id, doc] of state[coll] as Map<string, OrgCollections[typeof coll]>) {
      writes.push({ coll, id, doc } as OrgWrite);
    }
  }
  return writes;
}

/** How the organization's groups are stored: their places, and each group as the store holds it. */
export interface GroupsStored {
  places: MemberPlaces;
  /** Groups as stored before these writes; a group not in it is not stored. */
  before: ReadonlyMap<string, GroupDoc>;
}

/**
 * Persists writes as one: all land or none does, so a failure leaves nothing half applied. Without `groups`, the
 * writes are a new organization's: no group of it is stored yet.
 */
export async function persistWrites(
  store: Store,
  orgName: string,
  writes: readonly OrgWrite[],
  groups: GroupsStored = { places: new MemberPlaces(), before: new Map() },
): Promise<void> {
  const current = new Map<string, GroupDoc | undefined>();
  const ops: StoreOp[] = [];
  for (const w of writes) {
    const collection = w.coll === 'org' ? ORGS : orgCollection(orgName, w.coll);
    if (w.coll === 'groups') {
      const before = current.has(w.id) ? current.get(w.id) : groups.before.get(w.id);
      ops.push(...groupOps(collection, w.id, before, w.doc, groups.places, w.appendedClients));
      current.set(w.id, w.doc ?? undefined);
    } else ops.push(w.doc === null ? { collection, id: w.id, remove: true } : { collection, id: w.id, doc: w.doc });
  }
  await store.apply(ops);
}
