// What an organization knows of its push jobs and nodes, as plain data: every job's header for the job list, and
// the last known availability of every node heard. The job actors and node followers report changes; the organization
// answers the API from this without asking them.
import { z } from 'zod';
import { JobList } from './job-list.js';
import { nodeRecordSchema } from './node-machine.js';

/**
 * A node's record as its organization stores it: `gateway`, the member whose gateway reported this state (absent:
 * the owner's own follower, or a record older than the field). A gateway's reports of one node run on its own
 * clock, so one older than the record it reported before is a late copy (an inbox entry applied again).
 */
export const storedNodeRecordSchema = nodeRecordSchema.extend({ gateway: z.string().optional() });
export type StoredNodeRecord = z.infer<typeof storedNodeRecordSchema>;

/** A node's saved record, and whether jobs may use it now (up and not in rehab). */
export interface NodeAvailability extends StoredNodeRecord {
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
