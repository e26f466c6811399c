// The job and node status vocabulary of push jobs (spec 3.1, 3.2): the job machine steps through it, the REST
// bodies (src/api/push-jobs.ts) carry it.

/** Spec 3.1. */
export const JOB_STATUSES = [
  'new',
  'voting',
  'running',
  'complete',
  'quorum_failed',
  'crashed',
  'timed_out',
  'aborted',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

const FINISHED: ReadonlySet<JobStatus> = new Set<JobStatus>([
  'complete',
  'quorum_failed',
  'crashed',
  'timed_out',
  'aborted',
]);

/** A finished job never changes again. */
export function isFinished(status: JobStatus): boolean {
  return FINISHED.has(status);
}

/** Spec 3.2, in lifecycle order. */
export const NODE_JOB_STATUSES = [
  'new',
  'ready',
  'running',
  'succeeded',
  'failed',
  'aborted',
  'crashed',
  'nacked',
  'unavailable',
  'was_ready',
  'timed_out',
] as const;
export type NodeJobStatus = (typeof NODE_JOB_STATUSES)[number];

/**
 * How far along its job a node with this status is. A node only ever moves to a later stage (the job's transition
 * tables hold to it), so of two reports about one node, the one at the later stage is the newer.
 */
export const NODE_JOB_STAGE = {
  new: 0,
  ready: 1,
  running: 2,
  succeeded: 3,
  failed: 3,
  aborted: 3,
  crashed: 3,
  nacked: 3,
  unavailable: 3,
  was_ready: 3,
  timed_out: 3,
} as const satisfies Record<NodeJobStatus, number>;
