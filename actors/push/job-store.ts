// How a job is kept in the store: a small header document (status, deadlines, quorum, options) in the jobs
// collection, and one field per node (its status, when it got there, its exit status) in the job's field map
// of the same id, so a save costs what changed and not the size of the job. Snapshots written before field
// maps, with every node inside the document, still load.
import { z } from 'zod';
import { NODE_JOB_STATUSES } from '../../src/push/job-states.js';
import { jobOutputsCollection, jobsCollection } from '../../src/store/collections.js';
import type { Store } from '../../src/store/store.js';
import { parseDoc } from '../shared/documents.js';
import { countNodes } from './job-machine.js';
import { jobStateSchema, type JobState, type NodeJobStatus, type RolloutState } from './job-model.js';

/** A stored header: the job without its per-node maps (present only in snapshots of earlier versions). */
const jobHeaderSchema = jobStateSchema.partial({ nodes: true, counts: true, exit_status: true, node_updated_at: true });
export type JobHeader = Omit<JobState, 'nodes' | 'counts' | 'exit_status' | 'node_updated_at'>;

const nodeFieldSchema = z.object({
  status: z.enum(NODE_JOB_STATUSES),
  at: z.number().int().nonnegative(),
  exit_status: z.number().int().optional(),
});
type NodeField = z.infer<typeof nodeFieldSchema>;

/** The captured output of one node's run. */
export interface JobOutput {
  stdout: string;
  stderr: string;
  truncated: boolean;
}

/** One save: the header when the job-level fields changed, and the fields of the nodes that did. */
export interface JobSave {
  header: JobHeader | null;
  nodes: Array<readonly [string, NodeField]>;
  outputs: Array<readonly [string, JobOutput]>;
}

export function headerOf(s: JobState): JobHeader {
  const { id, command, options, run_timeout, voting_timeout, quorum, status, created_at, updated_at } = s;
  return {
    id,
    command,
    options,
    run_timeout,
    voting_timeout,
    quorum,
    status,
    created_at,
    updated_at,
    voting_deadline: s.voting_deadline,
    run_deadline: s.run_deadline,
    // A copy: the machine goes on changing its rollout, and a save shows the rollout as it was when taken.
    ...(s.rollout === undefined ? {} : { rollout: copyRollout(s.rollout) }),
    ...(s.schedule === undefined ? {} : { schedule: s.schedule }),
  };
}

function copyRollout(r: RolloutState): RolloutState {
  return { ...r, sizes: [...r.sizes], waves: r.waves.map((w) => ({ ...w })) };
}

export function nodeFieldOf(s: JobState, node: string): NodeField {
  const status = s.nodes[node];
  if (status === undefined) throw new Error(`job ${s.id}: no node ${node}`);
  const field: NodeField = { status, at: s.node_updated_at[node] ?? s.created_at };
  const exit = s.exit_status[node];
  if (exit !== undefined) field.exit_status = exit;
  return field;
}

/** A copy of a job whose maps the original's later steps leave alone. */
export function copyJob(s: JobState): JobState {
  const copy = <V>(m: Record<string, V>) => Object.assign(Object.create(null) as Record<string, V>, m);
  return {
    ...s,
    nodes: copy(s.nodes),
    exit_status: copy(s.exit_status),
    node_updated_at: copy(s.node_updated_at),
    counts: { ...s.counts },
    ...(s.rollout === undefined ? {} : { rollout: copyRollout(s.rollout) }),
  };
}

/** Brings a copy of the job up to a save it took (`counts` are not kept: nothing shown reads them). */
export function applySave(job: JobState, save: JobSave): void {
  if (save.header) Object.assign(job, save.header);
  for (const [node, field] of save.nodes) {
    job.nodes[node] = field.status;
    job.node_updated_at[node] = field.at;
    if (field.exit_status === undefined) delete job.exit_status[node];
    else job.exit_status[node] = field.exit_status;
  }
}

/** A new job: its header and every node. */
export function saveOf(s: JobState): JobSave {
  return { header: headerOf(s), nodes: Object.keys(s.nodes).map((n) => [n, nodeFieldOf(s, n)] as const), outputs: [] };
}

/**
 * Writes outputs first, then node fields, then the header: a crash between two writes leaves nodes ahead of
 * the job, which a restore settles as the machine would (every node done makes a running job complete), never
 * a finished job with nodes still in flight.
 */
export async function writeJob(store: Store, org: string, id: string, save: JobSave): Promise<void> {
  if (save.outputs.length > 0) {
    await store.putMany(
      jobOutputsCollection(org),
      save.outputs.map(([node, output]) => [`${id}/${node}`, output] as const),
    );
  }
  await store.putFields(jobsCollection(org), id, save.nodes);
  if (save.header) await store.put(jobsCollection(org), id, save.header);
}

/** Removes finished jobs whole: header, node fields and captured outputs. */
export async function purgeJobs(store: Store, org: string, ids: readonly string[]): Promise<void> {
  const jobs = jobsCollection(org);
  const outputs = jobOutputsCollection(org);
  for (const id of ids) {
    const nodes = [...(await store.getFields(jobs, id)).keys()];
    await store.apply([
      { collection: jobs, id, remove: true },
      ...nodes.map((node) => ({ collection: outputs, id: `${id}/${node}`, remove: true as const })),
    ]);
    await store.removeFields(jobs, id);
  }
}

/** Every job's header, for the job list; their nodes are read only for the jobs that need them. */
export async function loadJobHeaders(store: Store, org: string): Promise<JobHeader[]> {
  const coll = jobsCollection(org);
  return [...(await store.load(coll))].map(([id, raw]) => parseDoc(jobHeaderSchema, raw, coll, id));
}

/** One job with its nodes, or undefined. */
export async function loadJob(store: Store, org: string, id: string): Promise<JobState | undefined> {
  const coll = jobsCollection(org);
  const raw = await store.get(coll, id);
  if (raw === undefined) return undefined;
  return withNodes(store, org, parseDoc(jobHeaderSchema, raw, coll, id));
}

/** The header's job with its nodes from the field map (or from inside a snapshot of an earlier version). */
export async function withNodes(store: Store, org: string, header: z.infer<typeof jobHeaderSchema>): Promise<JobState> {
  const {
    nodes: legacyNodes,
    exit_status: legacyExit,
    node_updated_at: legacyTimes,
    counts: _counts,
    ...rest
  } = header;
  const nodes: Record<string, NodeJobStatus> = Object.create(null);
  const exit_status: Record<string, number> = Object.create(null);
  const node_updated_at: Record<string, number> = Object.create(null);
  if (legacyNodes) {
    Object.assign(nodes, legacyNodes);
    Object.assign(exit_status, legacyExit);
    Object.assign(node_updated_at, legacyTimes);
  } else {
    const coll = jobsCollection(org);
    for (const [node, raw] of await store.getFields(coll, header.id)) {
      const field = parseDoc(nodeFieldSchema, raw, `${coll}/${header.id}`, node);
      nodes[node] = field.status;
      node_updated_at[node] = field.at;
      if (field.exit_status !== undefined) exit_status[node] = field.exit_status;
    }
  }
  return { ...rest, nodes, exit_status, node_updated_at, counts: countNodes(nodes) };
}
