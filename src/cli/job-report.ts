// What the cli says about a job (spec 2.4, 4.4): the report of spec 4.4, the per-node table of `job status`, and
// the one-line reason a job did not fully succeed. The job's shape is src/api/push-jobs.ts's.
import type { JobBody } from '../api/push-jobs.js';
import type { RolloutView } from '../api/rollout.js';
import { NODE_JOB_STATUSES, type NodeJobStatus } from '../push/job-states.js';
import { formatColumns, formatFields } from './columns.js';

/** Node statuses that mean "still to come" in a live job. */
const pendingNodeStatuses: ReadonlySet<string> = new Set<NodeJobStatus>(['waiting', 'new', 'ready', 'running']);
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
  const r = job.rollout;
  if (r === undefined) return `${formatFields(fields)}\n${formatNodeTable(job)}`;
  fields.push(['Rollout', rolloutLine(r)]);
  return `${formatFields(fields)}\n${formatWaveTable(r)}\n${formatNodeTable(job)}`;
}

/** `wave 2 of 3, 1 failure (max_failures 1), pause 30 seconds`. */
function rolloutLine(r: RolloutView): string {
  const budget = r.max_failures === null ? 'no max_failures' : `max_failures ${r.max_failures}`;
  const failures = `${r.failures} failure${r.failures === 1 ? '' : 's'}`;
  return `wave ${r.current_wave} of ${r.waves.length}, ${failures} (${budget}), pause ${r.pause} seconds`;
}

/** Each wave: its status, its nodes and quorum, when it started and ended. */
export function formatWaveTable(r: RolloutView): string {
  return formatColumns(
    ['Wave', 'Status', 'Nodes', 'Quorum', 'Started', 'Ended'],
    r.waves.map((w) => [
      String(w.wave),
      w.status,
      w.nodes.length <= 3 ? w.nodes.join(', ') : `${w.nodes.length} (${w.nodes[0]} to ${w.nodes.at(-1)})`,
      String(w.quorum),
      w.started_at ?? '-',
      w.ended_at ?? '-',
    ]),
  );
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
  /** A rollout's nodes whose wave has not started. */
  waiting: number;
  voting: number;
  ready: number;
  running: number;
  finished: Array<[string, number]>;
} {
  const counts = nodeCounts(job);
  const of = (s: string) => counts.find(([status]) => status === s)?.[1] ?? 0;
  return {
    waiting: of('waiting'),
    voting: of('new'),
    ready: of('ready'),
    running: of('running'),
    finished: counts.filter(([s]) => !pendingNodeStatuses.has(s)),
  };
}
