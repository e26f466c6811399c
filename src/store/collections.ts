// Every store collection, named in one place: what each holds and who writes it. Collection names follow the
// rule of store.ts; documents are keyed by the id noted beside each.

/** Organization documents, by org name (the org actor; written last when an organization is created). */
export const ORGS = 'orgs';
/** User accounts, by user name (the users actor). */
export const USERS = 'users';
/** Server-wide documents: `server-admins` (the users actor) and SETUP_DONE (first start). */
export const GLOBAL = 'global';
/** Present once first-start setup is done: later starts change nothing. */
export const SETUP_DONE = { id: 'setup', doc: { done: true } } as const;
/** The push-jobs transport's CurveZMQ key pair, id `curve`. */
export const PUSH = 'push';

/** The collections an organization's actor restores and writes, by document name. */
export const ORG_COLLECTIONS = [
  'clients',
  'groups',
  'containers',
  'members',
  'nodes',
  'roles',
  'environments',
  'data',
  'items',
] as const;
export type OrgCollection = (typeof ORG_COLLECTIONS)[number];

/** Everything an organization owns lives below this; dropping it removes the organization's data. */
export function orgRoot(org: string): string {
  return `org/${org}`;
}

/** One of an organization's document collections. */
export function orgCollection(org: string, coll: OrgCollection): string {
  return `${orgRoot(org)}/${coll}`;
}

/** Job snapshots, by job id (the job actors). */
export function jobsCollection(org: string): string {
  return `${orgRoot(org)}/jobs`;
}

/** Captured output, by `JOB_ID/NODE` (the job actors). */
export function jobOutputsCollection(org: string): string {
  return `${orgRoot(org)}/job_outputs`;
}

/**
 * Node availability records (spec 2.5), written behind in batches as the field map NODE_STATES_MAP of this
 * collection, one field per node; documents of the collection itself, one per node, are from earlier versions.
 */
export function nodeStatesCollection(org: string): string {
  return `${orgRoot(org)}/node_states`;
}
export const NODE_STATES_MAP = 'all';

/** Push-jobs schedules, by schedule name (the push supervisor, actors/push/schedules.ts). */
export function schedulesCollection(org: string): string {
  return `${orgRoot(org)}/schedules`;
}

/** Push-jobs session keys, by node name (the transport). */
export function sessionsCollection(org: string): string {
  return `${orgRoot(org)}/sessions`;
}
