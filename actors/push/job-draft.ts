// One step of the job machine as it is decided (job-machine.ts, and a rollout's moves in job-waves.ts): the node
// moves of the tables, the job-level status, and the effects they come to, in the order that keeps every change
// stored before it is visible.
import type { JobNote } from '../../src/api/job-feed.js';
import { isFinished } from '../../src/push/job-states.js';
import type { IgnoreReason, JobEffect, JobEvent, JobState, JobStatus, JobStep, NodeJobStatus } from './job-model.js';
import type { Cell, CellNote } from './job-tables.js';

/** What one step decided so far; `effectsOf` turns it into ordered effects. */
export interface Draft {
  readonly state: JobState;
  readonly event: JobEvent;
  /** The job-level fields (status, times, deadlines) changed. */
  jobChanged: boolean;
  /** Nodes whose status changed, each once. */
  nodesChanged: Set<string>;
  outputs: string[];
  commit: string[];
  aborts: string[];
  run: string[];
  arm: JobEffect | null;
  finished: JobStatus | null;
  ignored: JobEffect[];
  notes: JobNote[];
}

export function draftOf(state: JobState, event: JobEvent): Draft {
  return {
    state,
    event,
    jobChanged: false,
    nodesChanged: new Set(),
    outputs: [],
    commit: [],
    aborts: [],
    run: [],
    arm: null,
    finished: null,
    ignored: [],
    notes: [],
  };
}

/** Moves `node` by a table's cell: its status, what the feed says, an abort to send, or why nothing moved. */
export function apply(d: Draft, node: string, cell: Cell): void {
  const s = d.state;
  if (cell.to !== undefined) {
    s.counts[statusOf(s, node)] -= 1;
    s.counts[cell.to] += 1;
    s.nodes[node] = cell.to;
    s.node_updated_at[node] = d.event.at;
    d.nodesChanged.add(node);
  }
  if (cell.note !== undefined) d.notes.push(noteOf(cell.note, node));
  if (cell.abort === true) {
    d.aborts.push(node);
    d.notes.push({ event: 'rehab', data: { node } });
  }
  if (cell.ignore !== undefined) d.ignored.push({ type: 'ignored', reason: cell.ignore, event: d.event.type, node });
}

/** The job-level status changes (a rollout's waves follow it in job-waves.ts `enter`). */
export function setStatus(d: Draft, status: JobStatus): void {
  d.state.status = status;
  d.state.updated_at = d.event.at;
  d.jobChanged = true;
  if (isFinished(status)) {
    d.finished = status;
    d.notes.push({ event: 'job_complete', data: { status } });
  }
}

function noteOf(n: CellNote, node: string): JobNote {
  switch (n.event) {
    case 'run_start':
      return { event: n.event, data: { node } };
    case 'quorum_vote':
      return { event: n.event, data: { node, status: n.status } };
    case 'run_complete':
      return { event: n.event, data: { node, status: n.status } };
  }
}

export function ignore(d: Draft, reason: IgnoreReason, node?: string): JobStep {
  const effect = { type: 'ignored', reason, event: d.event.type } as const;
  return { state: d.state, effects: [node === undefined ? effect : { ...effect, node }] };
}

// persist comes before every effect that makes the change visible: sends, timers and `finished`.
export function effectsOf(d: Draft): JobEffect[] {
  const s = d.state;
  const out: JobEffect[] = d.outputs.map((node) => ({ type: 'save_output', node }));
  if (d.jobChanged || d.nodesChanged.size > 0) {
    out.push({ type: 'persist', job: d.jobChanged, nodes: [...d.nodesChanged] });
  }
  if (d.notes.length > 0) out.push({ type: 'feed', at: d.event.at, notes: d.notes });
  if (d.commit.length > 0) {
    if (s.voting_deadline === null) throw new Error(`job ${s.id}: commits without a voting deadline`);
    out.push({
      type: 'send',
      message: 'commit',
      nodes: d.commit,
      job_id: s.id,
      command: s.command,
      options: s.options,
      run_timeout: s.run_timeout,
      vote_by: s.voting_deadline,
    });
  }
  if (d.aborts.length > 0) out.push({ type: 'send', message: 'abort', nodes: d.aborts, job_id: s.id });
  if (d.run.length > 0) out.push({ type: 'send', message: 'run', nodes: d.run, job_id: s.id });
  if (d.arm !== null) out.push(d.arm);
  if (d.finished !== null) out.push({ type: 'finished', status: d.finished });
  out.push(...d.ignored);
  return out;
}

export function statusOf(s: JobState, node: string): NodeJobStatus {
  const status = s.nodes[node];
  if (status === undefined) throw new Error(`job ${s.id}: no node ${node}`);
  return status;
}
