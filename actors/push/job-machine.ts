// The push-job lifecycle (spec 3.1, 3.2): stepJob applies the tables of job-tables.ts and decides the job-level move.
// A rollout runs it once per wave: its nodes wait (`waiting`) until their wave starts, each wave votes and runs as
// a whole job does, and the job ends after the last wave, or when one fails, or once failures pass the budget.
//
// stepJob updates `state` in place and returns that same object. A job may hold 20,000 nodes, and copying
// its node map on every answer costs about 20 ms there, which makes one wave of answers quadratic. The job
// actor owns the only reference and serializes it when it runs `persist` (JSON.stringify is synchronous, so
// a snapshot never mixes two steps).
import type { JobNote } from '../../src/api/job-feed.js';
import { isFinished, NODE_JOB_STATUSES } from '../../src/push/job-states.js';
import { apply, draftOf, effectsOf, ignore, statusOf, type Draft } from './job-draft.js';
import type {
  JobOptions,
  JobEvent,
  JobState,
  JobStep,
  NodeEventType,
  NodeJobStatus,
  RolloutState,
} from './job-model.js';
import { CRASH, RUNNING, VOTING, WAVES, type Cell, type RunBucket, type VoteBucket } from './job-tables.js';
import { enter, ran, startWave } from './job-waves.js';
import { waveNodes } from './rollout-plan.js';

/** Quorum as an absolute count: undefined is 100%; `N%` and fractions round up (reference 5.7). */
export function resolveQuorum(q: number | string | undefined, nodeCount: number): number {
  if (q === undefined) return nodeCount;
  const text = typeof q === 'number' ? null : q.trim();
  const percent = text === null ? null : /^(\d+(?:\.\d+)?)%$/.exec(text);
  if (percent !== null) return Math.ceil((Number(percent[1]) * nodeCount) / 100);
  const count = text === null ? q : /^\d+(?:\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (typeof count !== 'number' || !Number.isFinite(count) || count < 0) {
    throw new RangeError(`quorum must be a count or a percentage such as 50%, got ${JSON.stringify(q)}`);
  }
  return Math.ceil(count);
}

export type NewJob = Pick<JobState, 'id' | 'command' | 'run_timeout' | 'voting_timeout' | 'quorum' | 'requestor'> & {
  nodes: readonly string[];
  options?: JobOptions;
  at: number;
  /** A job in waves (rollout-plan.ts planRollout); its first wave's quorum is the job's to begin with. */
  rollout?: RolloutState;
};

export function newJob(init: NewJob): JobState {
  if (!Number.isInteger(init.quorum) || init.quorum < 0) throw new RangeError(`quorum ${init.quorum} is not a count`);
  const nodes = nullMap<NodeJobStatus>();
  const first = init.rollout ? new Set(waveNodes([...init.nodes].sort(), init.rollout.sizes, 0)) : null;
  for (const node of init.nodes) nodes[node] = first === null || first.has(node) ? 'new' : 'waiting';
  const state: JobState = {
    id: init.id,
    command: init.command,
    options: { ...init.options },
    run_timeout: init.run_timeout,
    voting_timeout: init.voting_timeout,
    quorum: init.quorum,
    status: 'new',
    nodes,
    counts: countNodes(nodes),
    exit_status: nullMap<number>(),
    node_updated_at: Object.assign(nullMap<number>(), Object.fromEntries(init.nodes.map((n) => [n, init.at]))),
    created_at: init.at,
    updated_at: init.at,
    voting_deadline: null,
    run_deadline: null,
  };
  if (init.requestor !== undefined) state.requestor = init.requestor;
  if (init.rollout) {
    state.rollout = structuredClone(init.rollout);
    state.quorum = (init.rollout.waves[0] as { quorum: number }).quorum;
  }
  return state;
}

export function stepJob(state: JobState, event: JobEvent): JobStep {
  const d = draftOf(state, event);
  const s = state;
  switch (event.type) {
    case 'start':
      if (s.status !== 'new') return ignore(d, 'already_started');
      d.notes.push(startNote(s));
      vote(
        d,
        Object.keys(s.nodes).filter((node) => s.nodes[node] === 'new'),
        event.available,
      );
      break;
    case 'next_wave':
      if (s.rollout?.next_wave_at !== event.due || s.status !== 'running') return ignore(d, 'stale_timer');
      s.rollout.next_wave_at = null;
      vote(d, waveNodes(Object.keys(s.nodes).sort(), s.rollout.sizes, s.rollout.current), event.available);
      break;
    case 'restored':
      restore(d, event.available);
      break;
    case 'node_reached':
      // Still undecided while voting: asked again where it is now. A node that got the first commit acks it again.
      if (s.status === 'voting' && s.nodes[event.node] === 'new') d.commit.push(event.node);
      break;
    case 'voting_timeout':
      if (s.status !== 'voting' || event.at !== s.voting_deadline) return ignore(d, 'stale_timer');
      for (const node in s.nodes) apply(d, node, VOTING.voting_timeout[voteBucket(s, node)]);
      decide(d);
      break;
    case 'run_timeout':
      if (s.status !== 'running' || event.at !== s.run_deadline) return ignore(d, 'stale_timer');
      for (const node in s.nodes) apply(d, node, RUNNING.run_timeout[runBucket(s, node)]);
      enter(d, 'timed_out');
      break;
    case 'crash':
      crash(d);
      break;
    case 'abort':
      if (s.status === 'new' || isFinished(s.status)) {
        const error = s.status === 'new' ? 'not_started' : 'job_finished';
        return { state, effects: [{ type: 'rejected', error, status: s.status }] };
      }
      for (const node in s.nodes) apply(d, node, cellFor(s, 'abort', node));
      enter(d, 'aborted');
      break;
    default: {
      const node = event.node;
      if (!Object.hasOwn(s.nodes, node)) return ignore(d, 'unknown_node', node);
      if (s.status === 'new') return ignore(d, 'not_started', node);
      // The same result again: its client had no ack_result yet (it was lost, or is on its way). Nothing moves
      // and nothing is told; the table's late result would say the client died.
      if ((event.type === 'succeeded' || event.type === 'failed') && s.nodes[node] === event.type)
        return ignore(d, 'duplicate_answer', node);
      const cell = cellFor(s, event.type, node);
      apply(d, node, cell);
      if (event.type !== 'node_down' && (cell.to === 'succeeded' || cell.to === 'failed')) {
        if (event.exit_status !== undefined) s.exit_status[node] = event.exit_status;
        if (event.output === true) d.outputs.push(node); // only output of an accepted result is kept
      }
      decide(d);
    }
  }
  return { state, effects: effectsOf(d) };
}

/**
 * `nodes` (all new, or a rollout's next wave, still waiting) are asked to vote, those of them `available`; the
 * others are unavailable. A rollout's wave starts here, with its own quorum.
 */
function vote(d: Draft, nodes: readonly string[], available: ReadonlySet<string>): void {
  const s = d.state;
  enter(d, 'voting');
  s.voting_deadline = d.event.at + s.voting_timeout * 1000;
  if (s.rollout) startWave(d, s.rollout, nodes.length);
  for (const node of nodes) {
    if (s.nodes[node] === 'waiting') apply(d, node, WAVES.start.waiting);
    if (available.has(node)) d.commit.push(node);
    else apply(d, node, VOTING.node_down.new);
  }
  decide(d);
  if (s.status === 'voting') d.arm = { type: 'arm', timer: 'voting', at: s.voting_deadline };
}

/**
 * After a server restart a job in flight keeps going: clients finish their current job while the server is
 * away (spec 3.3) and node followers restored `up` with the same client incarnation do not rehab them, so their
 * answers still arrive. Nodes not available now count as down; deadlines are re-armed unchanged (one that
 * passed during the outage fires at once). A job that never started (`new`) becomes `crashed`, its nodes
 * `unavailable`: it was never answered to its requester, so running it now would surprise them.
 */
function restore(d: Draft, available: ReadonlySet<string>): void {
  const s = d.state;
  s.nodes = Object.assign(nullMap<NodeJobStatus>(), s.nodes);
  s.exit_status = Object.assign(nullMap<number>(), s.exit_status);
  s.node_updated_at = Object.assign(nullMap<number>(), s.node_updated_at);
  s.counts = countNodes(s.nodes);
  if (s.status === 'new') {
    for (const node in s.nodes) apply(d, node, s.nodes[node] === 'waiting' ? WAVES.halt.waiting : VOTING.node_down.new);
    enter(d, 'crashed');
    return;
  }
  if (isFinished(s.status)) return;
  for (const node in s.nodes) if (!available.has(node)) apply(d, node, cellFor(s, 'node_down', node));
  const phase = s.status;
  decide(d);
  if (s.status !== phase) return;
  const pause = s.rollout?.next_wave_at ?? null;
  if (pause !== null) {
    d.arm = { type: 'arm', timer: 'wave', at: pause };
    return;
  }
  const at = phase === 'voting' ? s.voting_deadline : s.run_deadline;
  if (at === null) throw new Error(`job ${s.id}: ${phase} without a deadline`);
  d.arm = { type: 'arm', timer: phase === 'voting' ? 'voting' : 'run', at };
  // A commit may have been lost with the server; a node that got it acks it again, one that did not votes now.
  if (phase === 'voting') for (const node in s.nodes) if (s.nodes[node] === 'new') d.commit.push(node);
}

/**
 * The job actor threw: its state may be half-stepped, so nothing here trusts the counts or the phase. Every
 * node not yet finished moves by its own status alone and is told to drop the job; the job ends `crashed`.
 */
function crash(d: Draft): void {
  const s = d.state;
  if (isFinished(s.status)) {
    d.ignored.push({ type: 'ignored', reason: 'already_finished', event: 'crash' });
    return;
  }
  s.counts = countNodes(s.nodes);
  for (const node in s.nodes) {
    const status = statusOf(s, node);
    apply(d, node, status === 'new' || status === 'ready' || status === 'running' ? CRASH[status] : CRASH.terminal);
  }
  enter(d, 'crashed');
}

/** votingDone / runningDone: the job-level move the node moves of one event decide. */
function decide(d: Draft): void {
  const s = d.state;
  if (s.status === 'voting' && s.counts.new === 0) {
    if (s.counts.ready < s.quorum) {
      for (const node in s.nodes) apply(d, node, VOTING.quorum_failed[voteBucket(s, node)]);
      enter(d, 'quorum_failed');
    } else if (s.counts.ready === 0) {
      ran(d); // quorum 0 and nobody ready: nothing to run, and the user asked for no minimum
    } else {
      enter(d, 'running');
      d.notes.push({ event: 'quorum_succeeded', data: {} });
      s.run_deadline = d.event.at + s.run_timeout * 1000;
      for (const node in s.nodes) if (s.nodes[node] === 'ready') d.run.push(node);
      d.arm = { type: 'arm', timer: 'run', at: s.run_deadline };
    }
  }
  if (s.status === 'running' && s.counts.ready === 0 && s.counts.running === 0 && s.rollout?.next_wave_at == null)
    ran(d);
}

/** The feed's `start` event (reference 6.5: the run-as user is `job_user`, capture is `capture`). */
function startNote(s: JobState): JobNote {
  const data: Extract<JobNote, { event: 'start' }>['data'] = {
    command: s.command,
    run_timeout: s.run_timeout,
    quorum: s.quorum,
    node_count: s.counts.new + s.counts.waiting,
  };
  if (s.requestor !== undefined) data.user = s.requestor;
  const o = s.options;
  if (o.user !== undefined) data.job_user = o.user;
  if (o.dir !== undefined) data.dir = o.dir;
  if (o.env !== undefined) data.env = o.env;
  if (o.file !== undefined) data.file_specified = true;
  if (o.capture !== undefined) data.capture = o.capture;
  return { event: 'start', data };
}

/** The cell for `node` in the table of the job's phase; a finished job has only terminal nodes, so RUNNING serves. */
function cellFor(s: JobState, row: NodeEventType | 'abort', node: string): Cell {
  return s.status === 'voting' ? VOTING[row][voteBucket(s, node)] : RUNNING[row][runBucket(s, node)];
}

function voteBucket(s: JobState, node: string): VoteBucket {
  const status = statusOf(s, node);
  if (status === 'running') throw new Error(`job ${s.id}: node ${node} is running while the job is ${s.status}`);
  return status === 'waiting' || status === 'new' || status === 'ready' ? status : 'terminal';
}

function runBucket(s: JobState, node: string): RunBucket {
  const status = statusOf(s, node);
  if (status === 'new') throw new Error(`job ${s.id}: node ${node} is new while the job is ${s.status}`);
  return status === 'waiting' || status === 'ready' || status === 'running' ? status : 'terminal';
}

/** How many nodes are in each status. */
export function countNodes(nodes: Record<string, NodeJobStatus>): Record<NodeJobStatus, number> {
  const counts = Object.fromEntries(NODE_JOB_STATUSES.map((status) => [status, 0])) as Record<NodeJobStatus, number>;
  for (const status of Object.values(nodes)) counts[status] += 1;
  return counts;
}

// Null-prototype maps: node names such as `constructor` or `__proto__` are plain keys here.
function nullMap<V>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
}
