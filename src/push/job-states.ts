// The job and node status vocabulary of push jobs (spec 3.1, 3.2): the job machine steps through it, the REST
// bodies (src/api/push-jobs.ts) carry it. A rollout (a job in waves) adds one job status and two node statuses of
// its own, named in the specification's style.

/** Spec 3.1, then `max_failures_exceeded`: a rollout stopped starting waves once its failures passed its budget. */
export const JOB_STATUSES = [
  'new',
  'voting',
  'running',
  'complete',
  'quorum_failed',
  'crashed',
  'timed_out',
  'aborted',
  'max_failures_exceeded',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

const FINISHED: ReadonlySet<JobStatus> = new Set<JobStatus>([
  'complete',
  'quorum_failed',
  'crashed',
  'timed_out',
  'aborted',
  'max_failures_exceeded',
]);

/** A finished job never changes again. */
export function isFinished(status: JobStatus): boolean {
  return FINISHED.has(status);
}

/**
 * Spec 3.2, in lifecycle order, with a rollout's own two: `waiting`, in a later wave, not asked yet; `skipped`, its
 * wave never started (the rollout was halted, aborted, or ended before it).
 */
export const NODE_JOB_STATUSES = [
  'waiting',
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
  'skipped',
] as const;
export type NodeJobStatus = (typeof NODE_JOB_STATUSES)[number];

/**
 * How far along its job a node with this status is. A node only ever moves to a later stage (the job's transition
 * tables hold to it), so of two reports about one node, the one at the later stage is the newer.
 */
export const NODE_JOB_STAGE = {
  waiting: 0,
  new: 1,
  ready: 2,
  running: 3,
  succeeded: 4,
  failed: 4,
  aborted: 4,
  crashed: 4,
  nacked: 4,
  unavailable: 4,
  was_ready: 4,
  timed_out: 4,
  skipped: 4,
} as const satisfies Record<NodeJobStatus, number>;
