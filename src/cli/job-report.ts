// What the cli says about a job (spec 2.4, 4.4): the report of spec 4.4, the per-node table of `job status`, and
// the one-line reason a job did not fully succeed. The job's shape is src/api/push-jobs.ts's.
import type { JobBody } from '../api/push-jobs.js';
import { NODE_JOB_STATUSES, type NodeJobStatus } from '../push/job-states.js';
import { formatColumns, formatFields } from './columns.js';

/** Node statuses that mean "still to come" in a live job. */
const pendingNodeStatuses: ReadonlySet<string> = new Set<NodeJobStatus>(['new', 'ready', 'running']);
/** Finished node statuses that do not count against the job: it ran, or quorum failed through no fault of its own. */
const blamelessNodeStatuses: ReadonlySet<string> = new Set<NodeJobStatus>(['succeeded', 'was_ready']);

/** Spec 3.2's lifecycle order. */
function statusRank(status: string): number {
  return (NODE_JOB_STATUSES as readonly string[]).indexOf(status);
}

/** [status, names] for every status that holds a node. */
function nodeLists(job: Pick<JobBody, 'nodes'>): Array<[string, string[]]> {
  return Object.entries(job.nodes).filter((e): e is [string, string[]] => e[1] !== undefined && e[1].length > 0);
}

/** [status, node count] for every status that holds a node, in lifecycle order. */
export function nodeCounts(job: Pick<JobBody, 'nodes'>): Array<[string, number]> {
  return nodeLists(job)
    .map(([status, names]): [string, number] => [status, names.length])
    .sort(([a], [b]) => statusRank(a) - statusRank(b));
}

export function nodeTotal(job: Pick<JobBody, 'nodes'>): number {
  return nodeLists(job).reduce((n, [, names]) => n + names.length, 0);
}

/** Every node with its status, by node name. */
export function nodeRows(job: Pick<JobBody, 'nodes'>): Array<{ node: string; status: string }> {
  return nodeLists(job)
    .flatMap(([status, names]) => names.map((node) => ({ node, status })))
    .sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
}

const list = (names: readonly string[] | undefined): string =>
  names === undefined || names.length === 0 ? '(none)' : [...names].sort().join(', ');

/** The node table of `job status` (spec 4.4): each node's last update is when it reached its present status. */
export function formatNodeTable(job: JobBody): string {
  return formatColumns(
    ['Node name', 'Status', 'Last updated'],
    nodeRows(job).map((r) => [r.node, r.status, job.node_updated_at[r.node] ?? job.updated_at]),
  );
}

/** Spec 4.4's report: Command, Created_at, the unavailable and was_ready nodes, On_timeout and Status; then every node. */
export function formatJobReport(job: JobBody): string {
  const fields: Array<[string, string]> = [
    ['Job ID', job.id],
    ['Command', job.command],
    ['Created_at', job.created_at],
    ['unavailable', list(job.nodes.unavailable)],
    ['was_ready', list(job.nodes.was_ready)],
    ['Quorum', `${job.quorum} of ${nodeTotal(job)} nodes`],
    ['On_timeout', `${job.run_timeout} seconds`],
    ['Status', job.status],
  ];
  return `${formatFields(fields)}\n${formatNodeTable(job)}`;
}

/**
 * Null when the job completed and every node succeeded; otherwise one line, e.g.
 * `Job quorum_failed: 1 of 3 nodes nacked`. A node that was ready when quorum failed is not to blame.
 */
export function jobFailure(job: JobBody): string | null {
  const counts = nodeCounts(job);
  const blamed = counts.filter(([status]) => !blamelessNodeStatuses.has(status));
  if (job.status === 'complete' && blamed.length === 0) return null;
  if (blamed.length === 0) return `Job ${job.status}`;
  const total = nodeTotal(job);
  const parts = blamed.map(([status, n], i) =>
    i === 0 ? `${n} of ${total} node${total === 1 ? '' : 's'} ${status}` : `${n} ${status}`,
  );
  return `Job ${job.status}: ${parts.join(', ')}`;
}

/** Nodes in each phase of a live job: not voted yet, committed, running, and finished. */
export function phaseCounts(job: Pick<JobBody, 'nodes'>): {
  voting: number;
  ready: number;
  running: number;
  finished: Array<[string, number]>;
} {
  const counts = nodeCounts(job);
  const of = (s: string) => counts.find(([status]) => status === s)?.[1] ?? 0;
  return {
    voting: of('new'),
    ready: of('ready'),
    running: of('running'),
    finished: counts.filter(([s]) => !pendingNodeStatuses.has(s)),
  };
}
