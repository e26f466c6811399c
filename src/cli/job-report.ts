// The job as the cli reads it (spec 2.4) and what it says about one: the report of spec 4.4, the per-node
// table of `job status`, and the one-line reason a job did not fully succeed.
import { z } from 'zod';
import { formatColumns, formatFields } from './columns.js';

export const jobStatuses = ['new', 'voting', 'running', 'complete', 'quorum_failed', 'crashed', 'timed_out', 'aborted'] as const;
export type JobStatus = (typeof jobStatuses)[number];
const finishedStatuses: ReadonlySet<JobStatus> = new Set(['complete', 'quorum_failed', 'crashed', 'timed_out', 'aborted']);

/** Spec 3.2, in lifecycle order; statuses the server may add later are listed after these. */
export const NODE_STATUS_ORDER = [
  'new', 'ready', 'running', 'succeeded', 'failed', 'aborted', 'crashed', 'nacked', 'unavailable', 'was_ready', 'timed_out',
] as const;
/** Node statuses that mean "still to come" in a live job. */
const pendingNodeStatuses: ReadonlySet<string> = new Set(['new', 'ready', 'running']);
/** Finished node statuses that do not count against the job: it ran, or quorum failed through no fault of its own. */
const blamelessNodeStatuses: ReadonlySet<string> = new Set(['succeeded', 'was_ready']);

export const jobSummarySchema = z.looseObject({
  id: z.string(),
  command: z.string(),
  status: z.enum(jobStatuses),
  run_timeout: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type JobSummary = z.infer<typeof jobSummarySchema>;

export const jobSchema = jobSummarySchema.extend({
  nodes: z.record(z.string(), z.array(z.string())),
  quorum: z.number().optional(),
  node_updated_at: z.record(z.string(), z.string()).optional(),
});
export type Job = z.infer<typeof jobSchema>;

export function isFinished(status: JobStatus): boolean {
  return finishedStatuses.has(status);
}

function statusRank(status: string): number {
  const i = NODE_STATUS_ORDER.findIndex((s) => s === status);
  return i === -1 ? NODE_STATUS_ORDER.length : i;
}

/** [status, node count] for every status that holds a node, in lifecycle order. */
export function nodeCounts(job: Pick<Job, 'nodes'>): Array<[string, number]> {
  return Object.entries(job.nodes)
    .filter(([, names]) => names.length > 0)
    .map(([status, names]): [string, number] => [status, names.length])
    .sort(([a], [b]) => statusRank(a) - statusRank(b) || a.localeCompare(b));
}

export function nodeTotal(job: Pick<Job, 'nodes'>): number {
  return Object.values(job.nodes).reduce((n, names) => n + names.length, 0);
}

/** Every node with its status, by node name. */
export function nodeRows(job: Pick<Job, 'nodes'>): Array<{ node: string; status: string }> {
  return Object.entries(job.nodes)
    .flatMap(([status, names]) => names.map((node) => ({ node, status })))
    .sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
}

const list = (names: readonly string[] | undefined): string => (names === undefined || names.length === 0 ? '(none)' : [...names].sort().join(', '));

/**
 * The node table of `job status` (spec 4.4). The job object carries no per-node time, so a node's last update is
 * the job's: when the job entered its present status, which no node of a finished job changed after.
 */
export function formatNodeTable(job: Job): string {
  return formatColumns(['Node name', 'Status', 'Last updated'], nodeRows(job).map((r) => [r.node, r.status, job.node_updated_at?.[r.node] ?? job.updated_at]));
}

/** Spec 4.4's report: Command, Created_at, the unavailable and was_ready nodes, On_timeout and Status; then every node. */
export function formatJobReport(job: Job): string {
  const fields: Array<[string, string]> = [
    ['Job ID', job.id],
    ['Command', job.command],
    ['Created_at', job.created_at],
    ['unavailable', list(job.nodes.unavailable)],
    ['was_ready', list(job.nodes.was_ready)],
  ];
  if (job.quorum !== undefined) fields.push(['Quorum', `${job.quorum} of ${nodeTotal(job)} nodes`]);
  fields.push(['On_timeout', `${job.run_timeout} seconds`], ['Status', job.status]);
  return `${formatFields(fields)}\n${formatNodeTable(job)}`;
}

/**
 * Null when the job completed and every node succeeded; otherwise one line, e.g.
 * `Job quorum_failed: 1 of 3 nodes nacked`. A node that was ready when quorum failed is not to blame.
 */
export function jobFailure(job: Job): string | null {
  const counts = nodeCounts(job);
  const blamed = counts.filter(([status]) => !blamelessNodeStatuses.has(status));
  if (job.status === 'complete' && blamed.length === 0) return null;
  if (blamed.length === 0) return `Job ${job.status}`;
  const total = nodeTotal(job);
  const parts = blamed.map(([status, n], i) => (i === 0 ? `${n} of ${total} node${total === 1 ? '' : 's'} ${status}` : `${n} ${status}`));
  return `Job ${job.status}: ${parts.join(', ')}`;
}

/** Nodes in each phase of a live job: not voted yet, committed, running, and finished. */
export function phaseCounts(job: Pick<Job, 'nodes'>): { voting: number; ready: number; running: number; finished: Array<[string, number]> } {
  const counts = nodeCounts(job);
  const of = (s: string) => counts.find(([status]) => status === s)?.[1] ?? 0;
  return { voting: of('new'), ready: of('ready'), running: of('running'), finished: counts.filter(([s]) => !pendingNodeStatuses.has(s)) };
}
