// What an organization knows of its push jobs and nodes, as plain data: every job's header for the job list, and
// the last known availability of every node heard. The job actors and node followers report changes; the organization
// answers the API from this without asking them.
import { JobList } from './job-list.js';
import type { NodeRecord } from './node-machine.js';

/** A node's saved record, and whether jobs may use it now (up and not in rehab). */
export interface NodeAvailability extends NodeRecord {
  available: boolean;
}

export interface PushData {
  /** Every job's header (status, times, options): the job list, and what a lost store gets back. */
  headers: JobList;
  records: Map<string, NodeAvailability>;
}

export function emptyPushData(): PushData {
  return { headers: new JobList(), records: new Map() };
}
