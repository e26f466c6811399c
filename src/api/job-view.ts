// GET .../pushy/jobs/ID (spec 2.4) as a view over a job as stored or stepped: the job machine's state satisfies
// JobShape, and so does anything else with a job's fields, so the view knows nothing of the actors.
import { httpDate } from '../lib/dates.js';
import type { JobStatus, NodeJobStatus } from '../push/job-states.js';
import type { JobBody } from './push-jobs.js';
import type { FailureBudget, RolloutView, WaveStatus } from './rollout.js';

/** What a job's rollout view is made from (the job machine's rollout state satisfies it). */
export interface RolloutShape {
  sizes: readonly number[];
  waves: ReadonlyArray<{ status: WaveStatus; quorum: number; started_at: number | null; ended_at: number | null }>;
  max_failures: FailureBudget | null;
  pause: number;
  current: number;
  next_wave_at: number | null;
}

/** The statuses of a node that ran the command and did not succeed: what a rollout's failure budget counts. */
export const FAILED_RUNS: ReadonlySet<NodeJobStatus> = new Set(['failed', 'crashed', 'timed_out', 'aborted']);

/** What a job's JSON is made from. */
export interface JobShape {
  id: string;
  command: string;
  run_timeout: number;
  status: JobStatus;
  created_at: number;
  updated_at: number;
  quorum: number;
  nodes: Record<string, NodeJobStatus>;
  node_updated_at: Record<string, number>;
  options: { capture?: boolean; env?: Record<string, string>; dir?: string; user?: string };
  rollout?: RolloutShape;
  schedule?: { name: string; occurrence: number };
}

/**
 * Per-node status to sorted node names, statuses with no node left out (the API's `nodes` object). `sorted`, the
 * job's node names already sorted (a job's nodes are fixed), spares sorting each status's names on every call.
 */
export function jobNodesByStatus(
  job: Pick<JobShape, 'nodes'>,
  sorted?: readonly string[],
): Partial<Record<NodeJobStatus, string[]>> {
  const out: Partial<Record<NodeJobStatus, string[]>> = {};
  const add = (node: string) => {
    const status = job.nodes[node] as NodeJobStatus;
    const names = out[status];
    if (names) names.push(node);
    else out[status] = [node];
  };
  if (sorted) for (const node of sorted) add(node);
  else {
    // for...in over the null-prototype map: Object.entries would first build 10,000 pairs for a large job.
    for (const node in job.nodes) add(node);
    for (const names of Object.values(out)) names.sort();
  }
  return out;
}

/** The job's JSON; `sorted`: its node names, sorted once for every rendering (see jobNodesByStatus). */
export function jobJson(s: JobShape, sorted?: readonly string[]): JobBody {
  const body: JobBody = {
    id: s.id,
    command: s.command,
    run_timeout: s.run_timeout,
    status: s.status,
    created_at: httpDate(s.created_at),
    updated_at: httpDate(s.updated_at),
    quorum: s.quorum,
    nodes: jobNodesByStatus(s, sorted),
    capture_output: s.options.capture === true,
    // Without a prototype, so that any node name, `__proto__` too, is an ordinary key.
    node_updated_at: Object.create(null) as Record<string, string>,
  };
  for (const node in s.node_updated_at) body.node_updated_at[node] = httpDate(s.node_updated_at[node] as number);
  if (s.options.env !== undefined) body.env = s.options.env;
  if (s.options.dir !== undefined) body.dir = s.options.dir;
  if (s.options.user !== undefined) body.user = s.options.user;
  if (s.rollout !== undefined) body.rollout = rolloutJson(s, s.rollout, sorted ?? Object.keys(s.nodes).sort());
  if (s.schedule !== undefined) body.schedule = { name: s.schedule.name, occurrence: httpDate(s.schedule.occurrence) };
  return body;
}

/** The waves with their nodes (the job's, by name, in runs of the waves' sizes) and how each went. */
function rolloutJson(s: Pick<JobShape, 'nodes'>, r: RolloutShape, sorted: readonly string[]): RolloutView {
  let from = 0;
  const waves = r.waves.map((w, i) => {
    const size = r.sizes[i] ?? 0;
    const nodes = sorted.slice(from, from + size);
    from += size;
    const at = (t: number | null) => (t === null ? null : httpDate(t));
    return {
      wave: i + 1,
      status: w.status,
      nodes,
      quorum: w.quorum,
      started_at: at(w.started_at),
      ended_at: at(w.ended_at),
    };
  });
  let failures = 0;
  for (const node in s.nodes) if (FAILED_RUNS.has(s.nodes[node] as NodeJobStatus)) failures += 1;
  return {
    waves,
    current_wave: r.current,
    max_failures: r.max_failures,
    pause: r.pause,
    failures,
    next_wave_at: r.next_wave_at === null ? null : httpDate(r.next_wave_at),
  };
}
