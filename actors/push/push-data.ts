// What an organization knows of its push jobs and nodes, as plain data: every job's header for the job list, the
// last known availability of every node heard, and its schedules. The job actors and node followers report changes; the organization
// answers the API from this without asking them.
import { z } from 'zod';
import { JobList } from './job-list.js';
import { nodeRecordSchema, type NodeRecord } from './node-machine.js';
import type { ScheduleState } from './schedule-machine.js';

/**
 * A node's record as its organization stores it: `gateway`, the member whose gateway reported this state (absent:
 * the owner's own follower, or a record older than the field). A gateway's reports of one node run on its own
 * clock, so one older than the record it reported before is a late copy (an inbox entry applied again).
 */
export const storedNodeRecordSchema = nodeRecordSchema.extend({ gateway: z.string().optional() });
export type StoredNodeRecord = z.infer<typeof storedNodeRecordSchema>;

/** The node machine's record of a node as stored (its gateway, and its availability, are the organization's). */
export function nodeRecordOf(node: string, r: StoredNodeRecord): NodeRecord {
  return { node_name: node, status: r.status, updated_at: r.updated_at, incarnation: r.incarnation };
}

/** A node's saved record, and whether jobs may use it now (up and not in rehab). */
export interface NodeAvailability extends StoredNodeRecord {
  available: boolean;
}

export interface PushData {
  /** Every job's header (status, times, options): the job list, and what a lost store gets back. */
  headers: JobList;
  records: Map<string, NodeAvailability>;
  /** The organization's schedules, by name (schedules.ts). */
  schedules: Map<string, ScheduleState>;
}

export function emptyPushData(): PushData {
  return { headers: new JobList(), records: new Map(), schedules: new Map() };
}
