// An organization's in-memory state, how it is restored from the store, and how changes reach it: every
// change is a list of writes, persisted first and then applied, so memory never runs ahead of the store.
import type { z } from 'zod';
import type { Store } from '../src/store/store.js';
import type { Reply } from './reply.js';
import {
  clientDocSchema, containerDocSchema, groupDocSchema, memberDocSchema, objectDocSchema, orgDocSchema,
  type ClientDoc, type ContainerDoc, type GroupDoc, type MemberDoc, type ObjectDoc, type OrgDoc,
} from './docs.js';
import { isTerminal, jobStateSchema } from './job-model.js';
import { jobsCollection, summaryOf } from './job.js';
import { nodeRecordSchema } from './node-machine.js';
import { emptyPushRuntime, type PushRuntime } from './org-push.js';
import { buildSearch, emptySearch, indexWrite, type OrgSearch } from './org-search.js';

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
export type OrgCollection = keyof OrgCollections;
export const ORG_COLLECTIONS: readonly OrgCollection[] = ['clients', 'groups', 'containers', 'members', 'nodes', 'roles', 'environments', 'data', 'items'];

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

export type OrgState = { org: OrgDoc; deleted: boolean; push: PushRuntime; search: OrgSearch } & { [K in OrgCollection]: Map<string, OrgCollections[K]> };

/** One document to write (`doc`) or remove (`doc: null`). `org` is the organization document itself. */
export type OrgWrite =
  | { [K in OrgCollection]: { coll: K; id: string; doc: OrgCollections[K] | null } }[OrgCollection]
  | { coll: 'org'; id: string; doc: OrgDoc | null };

/** What a request handler decides: the answer, and the writes that must be persisted before it. */
export interface Outcome {
  reply: Reply;
  writes?: OrgWrite[];
}

/** The collection holding every organization document, keyed by org name. */
export const ORGS_COLLECTION = 'orgs';

export function orgCollection(org: string, coll: OrgCollection): string {
  return `org/${org}/${coll}`;
}

export function emptyOrgState(org: OrgDoc): OrgState {
  return {
    org, deleted: false, push: emptyPushRuntime(), search: emptySearch(), clients: new Map(), groups: new Map(), containers: new Map(), members: new Map(),
    nodes: new Map(), roles: new Map(), environments: new Map(), data: new Map(), items: new Map(),
  };
}

/** Restores one organization; a document that fails its schema stops the server with its collection and id. */
export async function loadOrg(store: Store, rawOrg: unknown): Promise<OrgState> {
  const org = parseDoc(orgDocSchema, rawOrg, ORGS_COLLECTION, '?');
  const state = emptyOrgState(org);
  for (const coll of ORG_COLLECTIONS) {
    const name = orgCollection(org.name, coll);
    const docs = await store.load(name);
    const target = state[coll] as Map<string, unknown>;
    const schema: z.ZodType<unknown> = SCHEMAS[coll];
    for (const [id, raw] of docs) target.set(id, parseDoc(schema, raw, name, id));
  }
  buildSearch(state);
  const jobs = jobsCollection(org.name);
  for (const [id, raw] of await store.load(jobs)) {
    const job = parseDoc(jobStateSchema, raw, jobs, id);
    state.push.summaries.set(id, summaryOf(job));
    if (!isTerminal(job.status)) state.push.restored.push(job);
  }
  const records = nodeStatesCollection(org.name);
  for (const [id, raw] of await store.load(records)) {
    // A node up when the server stopped counts as available until its silence says otherwise, so jobs
    // in flight can resume with clients that kept running (spec 3.3).
    const record = parseDoc(nodeRecordSchema, raw, records, id);
    state.push.records.set(id, { ...record, available: record.status === 'up' });
  }
  return state;
}

/** Node availability records, written behind in batches (spec 2.5). */
export function nodeStatesCollection(org: string): string {
  return `org/${org}/node_states`;
}

export function parseDoc<T>(schema: z.ZodType<T>, raw: unknown, collection: string, id: string): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`store document ${collection}/${id} is invalid at '${issue?.path.join('.') ?? ''}': ${issue?.message ?? 'unknown'}`);
  }
  return parsed.data;
}

/** Persists writes, grouped per collection so a batch costs one round trip per collection. */
export async function persistWrites(store: Store, orgName: string, writes: readonly OrgWrite[]): Promise<void> {
  const puts = new Map<string, Array<readonly [string, unknown]>>();
  for (const w of writes) {
    const coll = w.coll === 'org' ? ORGS_COLLECTION : orgCollection(orgName, w.coll);
    if (w.doc === null) {
      await store.remove(coll, w.id);
      continue;
    }
    const list = puts.get(coll) ?? [];
    list.push([w.id, w.doc]);
    puts.set(coll, list);
  }
  for (const [coll, docs] of puts) {
    const only = docs.length === 1 ? docs[0] : undefined;
    if (only) await store.put(coll, only[0], only[1]);
    else await store.putMany(coll, docs);
  }
}

export function applyWrites(state: OrgState, writes: readonly OrgWrite[]): void {
  for (const w of writes) {
    if (w.coll === 'org') {
      if (w.doc === null) state.deleted = true;
      else state.org = w.doc;
      continue;
    }
    const target = state[w.coll] as Map<string, unknown>;
    if (w.doc === null) target.delete(w.id);
    else target.set(w.id, w.doc);
    indexWrite(state, w);
  }
}
