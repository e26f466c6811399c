// GET .../pushy/jobs/ID (spec 2.4) as a view over a job as stored or stepped: the job machine's state satisfies
// JobShape, and so does anything else with a job's fields, so the view knows nothing of the actors.
import { httpDate } from '../lib/dates.js';
import type { JobStatus, NodeJobStatus } from '../push/job-states.js';
import type { JobBody } from './push-jobs.js';

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
  return body;
}
