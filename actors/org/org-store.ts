// An organization in the store: restoring it (every document checked against its schema) and persisting a
// list of writes, grouped per collection so a batch costs one round trip per collection.
import { isFinished } from '../../src/api/push-jobs.js';
import type { z } from 'zod';
import {
  NODE_STATES_MAP,
  nodeStatesCollection,
  ORG_COLLECTIONS,
  orgCollection,
  ORGS,
  type OrgCollection,
} from '../../src/store/collections.js';
import type { Store, StoreOp } from '../../src/store/store.js';
import {
  clientDocSchema,
  containerDocSchema,
  groupDocSchema,
  memberDocSchema,
  objectDocSchema,
  orgDocSchema,
  parseDoc,
} from '../shared/documents.js';
import type { JobState } from '../push/job-model.js';
import { loadJobHeaders, withNodes } from '../push/job-store.js';
import { nodeRecordSchema } from '../push/node-machine.js';
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
}

/** Restores one organization; a document that fails its schema stops the server naming its collection and id. */
export async function loadOrg(store: Store, rawOrg: unknown): Promise<LoadedOrg> {
  const org = parseDoc(orgDocSchema, rawOrg, ORGS, '?');
  const state = emptyOrgState(org);
  for (const coll of ORG_COLLECTIONS) {
    const name = orgCollection(org.name, coll);
    const schema: z.ZodType<OrgCollections[typeof coll]> = SCHEMAS[coll];
    const writes: OrgWrite[] = [];
    for (const [id, raw] of await store.load(name))
      writes.push({ coll, id, doc: parseDoc(schema, raw, name, id) } as OrgWrite);
    applyWrites(state, writes);
  }
  const inFlight: JobState[] = [];
  for (const header of await loadJobHeaders(store, org.name)) {
    state.push.headers.set(header.id, header);
    if (!isFinished(header.status)) inFlight.push(await withNodes(store, org.name, header));
  }
  const records = nodeStatesCollection(org.name);
  // Documents first (earlier versions wrote one per node), then the field map that replaced them.
  const saved = [...(await store.load(records)), ...(await store.getFields(records, NODE_STATES_MAP))];
  for (const [id, raw] of saved) {
    // A node up when the server stopped counts as available until its silence says otherwise, so jobs
    // in flight can resume with clients that kept running (spec 3.3).
    const record = parseDoc(nodeRecordSchema, raw, records, id);
    state.push.records.set(id, { ...record, available: record.status === 'up' });
  }
  return { state, inFlight };
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

/** Persists writes as one: all land or none does, so a failure leaves nothing half applied. */
export async function persistWrites(store: Store, orgName: string, writes: readonly OrgWrite[]): Promise<void> {
  await store.apply(
    writes.map((w): StoreOp => {
      const collection = w.coll === 'org' ? ORGS : orgCollection(orgName, w.coll);
      return w.doc === null ? { collection, id: w.id, remove: true } : { collection, id: w.id, doc: w.doc };
    }),
  );
}
