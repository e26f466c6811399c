// One node's availability (spec 3.3) and rehab (reference 4.2) as a pure transition table over its heartbeats.
//
// Heartbeats are the hot path (20,000 nodes beating every second in one process), so a heartbeat that changes
// nothing visible allocates nothing: the bookkeeping fields below are updated in place, the same state object
// comes back, and so does one cached `{ state, effects }` result per state object with a shared frozen empty
// effects array. The machine never keeps a reference to an event (of a commit written it keeps the message), so the
// transport may reuse one event object. Visible fields (status, updated_at, incarnation, rehab) change only in a
// fresh state object. The commits written and not answered yet are bookkeeping too (awaited-commits.ts): a heartbeat
// reads them through vote-recovery.ts, and a node that awaits none pays one field check for them.
import { z } from 'zod';
import type { ClientJobState, NodeAnswerType } from '../../src/protocol/messages.js';
import {
  answered,
  recoveries,
  waitsAfter,
  type AwaitedCommits,
  type VoteRecovered,
  type WriteFact,
} from './awaited-commits.js';
import type { ServerLag } from './ports.js';

export type NodeStatus = 'up' | 'down';

/** The settings of push-jobs-server.rb this machine reads; a ServerConfig fits as is. */
export interface NodeConfig {
  heartbeat_interval: number; // ms; also the abort resend period while in rehab (reference 4.1 rehab_timer)
  offline_threshold: number; // heartbeat intervals of silence before `down`
  online_threshold: number; // consecutive heartbeats before `up` again
}

/** What the write-behind batch stores for a node, and what a restart restores from. */
export const nodeRecordSchema = z.object({
  node_name: z.string(),
  status: z.enum(['up', 'down']),
  updated_at: z.number().int().nonnegative(), // when `status` last changed (spec 2.5)
  incarnation: z.string().nullable(), // the client process last heard (reference 2.8)
});
export type NodeRecord = z.infer<typeof nodeRecordSchema>;

export interface NodeState extends Readonly<NodeRecord> {
  readonly config: NodeConfig;
  /** Up, abort sent, waiting for `aborted`: not available for jobs meanwhile. */
  readonly rehab: boolean;
  // Bookkeeping, updated in place and invisible outside the machine.
  /** Last heartbeat counted (for `up`: the silence clock; for `down`: the streak clock). */
  last_heartbeat_at: number;
  /** Consecutive heartbeats counted while down. */
  streak: number;
  abort_sent_at: number;
  /** The `last_heartbeat_at` whose silence a tick last kept from marking the node down (counted once per silence). */
  deferred_for: number;
  /** The sequence of the client's latest answer (its sequences rise across both channels): 0 before any. */
  answered_through: number;
  /** The commits written to the node and not answered yet; undefined when none (most nodes, most of the time). */
  awaiting: AwaitedCommits | undefined;
}

/** The job a client's message names, as the server sees it: none, one it runs, or one it does not run (any more). */
export type JobHeld = 'none' | 'known' | 'unknown';

/**
 * `sequence`: the message's place in what its client sent, on either channel; a heartbeat sent before the client's
 * latest answer may name a job that answer ended. `lag`: how far behind the server hears its nodes now.
 */
export type NodeEvent =
  /** `job_id`, `job_state`: what the beat says the client holds; `job`: whether that job runs. */
  | {
      type: 'heartbeat';
      at: number;
      incarnation: string;
      job: JobHeld;
      job_id: string | null;
      job_state: ClientJobState;
      sequence: number;
      lag: ServerLag;
    }
  /**
   * Periodic, with the current time: decides silence and abort resends. `lag`: how far behind the server hears its
   * nodes now; silence within it may be the server's doing, so it lengthens the offline window.
   */
  | { type: 'tick'; at: number; lag: ServerLag }
  | { type: 'answer'; at: number; answer: NodeAnswerType; job_id: string | null; job: JobHeld; sequence: number }
  | WriteFact;

export type NodeEffect =
  | { type: 'availability_changed'; node_name: string; status: NodeStatus; available: boolean; updated_at: number }
  | { type: 'incarnation_changed'; node_name: string; from: string; to: string }
  | { readonly type: 'send'; readonly message: 'abort' } // to this node
  /** Silent past the offline window, but not past it plus the server's lag: still up, and counted. */
  | { readonly type: 'down_deferred' }
  /** The answer goes on to its job's actor. */
  | { readonly type: 'forward' }
  /** A result for a job that runs no more: acknowledged, so its client stops sending it; no job will take it. */
  | { readonly type: 'ack_result' }
  | { readonly type: 'ignored'; readonly reason: 'not_in_rehab' | 'answer_for_unknown_job' }
  | VoteRecovered;

export interface NodeStep {
  readonly state: NodeState;
  readonly effects: readonly NodeEffect[];
}

type Bucket = 'down' | 'rehab' | 'available';
type Signal = 'beat' | 'online' | 'new_incarnation' | 'silence' | 'resend' | 'aborted' | 'unknown_job' | 'stale_job';

/** `to`: the next bucket; `send`: a message to the node; `ignore`: no move, report why. */
interface Cell {
  readonly to?: Bucket;
  readonly send?: 'abort';
  readonly ignore?: 'not_in_rehab';
}

const KEEP: Cell = {};
const TO_REHAB: Cell = { to: 'rehab', send: 'abort' };

// Rows are what an event means once the thresholds are applied. Coming back from `down` and a client restart
// both rehab the node: every job has already written it off (it saw the node down), so whatever the client
// still runs is aborted, and the abort/aborted round trip proves the command channel before jobs use it.
// A reconnect of the same client does not rehab: it may still be finishing a job (spec 3.3). A client that
// holds a job this server does not run (any more) is reset the same way, or it would stay busy for nothing; but
// a heartbeat sent before the client's latest answer proves nothing of the sort: heartbeats and answers travel on
// two channels, and one read late (a server behind its heartbeats) names the job the answer after it finished.
const MOVES = {
  beat: { down: KEEP, rehab: KEEP, available: KEEP },
  online: { down: TO_REHAB, rehab: KEEP, available: KEEP },
  new_incarnation: { down: KEEP, rehab: { send: 'abort' }, available: TO_REHAB },
  silence: { down: KEEP, rehab: { to: 'down' }, available: { to: 'down' } },
  resend: { down: KEEP, rehab: { send: 'abort' }, available: KEEP },
  aborted: { down: { ignore: 'not_in_rehab' }, rehab: { to: 'available' }, available: { ignore: 'not_in_rehab' } },
  unknown_job: { down: KEEP, rehab: KEEP, available: TO_REHAB },
  stale_job: { down: KEEP, rehab: KEEP, available: KEEP },
} satisfies Record<Signal, Record<Bucket, Cell>>;

const NO_EFFECTS: readonly NodeEffect[] = Object.freeze([]);
const SEND_ABORT: NodeEffect = Object.freeze({ type: 'send', message: 'abort' });
const FORWARD: NodeEffect = Object.freeze({ type: 'forward' });
const NOT_IN_REHAB: NodeEffect = Object.freeze({ type: 'ignored', reason: 'not_in_rehab' });
const UNKNOWN_JOB_ANSWER: NodeEffect = Object.freeze({ type: 'ignored', reason: 'answer_for_unknown_job' });
const ACK_RESULT: NodeEffect = Object.freeze({ type: 'ack_result' });
const DOWN_DEFERRED: readonly NodeEffect[] = Object.freeze([Object.freeze({ type: 'down_deferred' as const })]);

/**
 * The server's lag lengthens the offline window by at most this many windows (12 s with the defaults): a server
 * wedged behind its heartbeats for good still marks a truly dead node down, once it has been silent five windows.
 */
export const LAG_ALLOWANCE_WINDOWS = 4;
/** Answers saying the client holds the job it names. */
const HOLDING: ReadonlySet<NodeAnswerType> = new Set<NodeAnswerType>(['ack_commit', 'ack_run']);
/** Answers that report a command's end, which a client sends until acknowledged. */
const RESULTS: ReadonlySet<NodeAnswerType> = new Set<NodeAnswerType>(['succeeded', 'failed']);

const quietSteps = new WeakMap<NodeState, NodeStep>();

/** The unchanged result for `state`, built once per state object. */
function quiet(state: NodeState): NodeStep {
  let step = quietSteps.get(state);
  if (step === undefined) {
    step = Object.freeze({ state, effects: NO_EFFECTS });
    quietSteps.set(state, step);
  }
  return step;
}

export interface NewNode {
  node_name: string;
  config: NodeConfig;
  at: number;
  /** The record saved before a restart: its status holds, and the silence clock starts at `at`. */
  saved?: NodeRecord;
}

/** A node never heard is `down` until `online_threshold` heartbeats arrive. */
export function newNode(init: NewNode): NodeState {
  const { config } = init;
  for (const key of ['heartbeat_interval', 'offline_threshold', 'online_threshold'] as const) {
    if (!Number.isInteger(config[key]) || config[key] < 1) throw new RangeError(`${key} must be a positive integer`);
  }
  return {
    node_name: init.node_name,
    status: init.saved?.status ?? 'down',
    updated_at: init.saved?.updated_at ?? init.at,
    incarnation: init.saved?.incarnation ?? null,
    config,
    rehab: false,
    last_heartbeat_at: init.at,
    streak: 0,
    abort_sent_at: 0,
    deferred_for: Number.NaN,
    answered_through: 0,
    awaiting: undefined,
  };
}

/** `state`, restarted from a record, still awaiting what `before` awaited: a record says nothing of those. */
export function restarted(before: NodeState, state: NodeState): NodeState {
  return before.awaiting === undefined ? state : { ...state, awaiting: before.awaiting };
}

export function isAvailable(state: NodeState): boolean {
  return state.status === 'up' && !state.rehab;
}

export function nodeRecord(state: NodeState): NodeRecord {
  const { node_name, status, updated_at, incarnation } = state;
  return { node_name, status, updated_at, incarnation };
}

export function stepNode(state: NodeState, event: NodeEvent): NodeStep {
  // Times come from the server's clock; one that is not a number is a bug upstream, never a peer's input.
  if (!Number.isFinite(event.at)) throw new RangeError(`node ${state.node_name}: ${event.type} without a time`);
  if (event.type === 'tick' && !(Number.isFinite(event.lag.backlog) && Number.isFinite(event.lag.stall)))
    throw new RangeError(`node ${state.node_name}: tick without a lag`);
  switch (event.type) {
    case 'heartbeat': {
      // What the beat recovers comes before what it moves, as the node's answers it stands for would have.
      const recovered = state.awaiting === undefined ? undefined : recoverVotes(state, event);
      const step = beat(state, event);
      return recovered === undefined ? step : done(state, step.state, [...recovered, ...step.effects]);
    }
    case 'answer':
      return answer(state, event);
    case 'written':
    case 'unroutable':
    case 'answer_relayed':
      state.awaiting = waitsAfter(state.awaiting, event);
      return quiet(state);
    case 'tick': {
      if (state.status === 'down') return quiet(state);
      const silence = silenceOf(state, event.at, event.lag);
      if (silence === 'down') return move(state, 'silence', event.at, NO_EFFECTS);
      const step = resendDue(state, event.at) ? move(state, 'resend', event.at, NO_EFFECTS) : quiet(state);
      if (silence !== 'deferred' || state.deferred_for === state.last_heartbeat_at) return step;
      step.state.deferred_for = state.last_heartbeat_at;
      return done(state, step.state, [...step.effects, ...DOWN_DEFERRED]);
    }
  }
}

/**
 * Whether a `tick` at `at` with the server `lag` ms behind would do anything: mark the node down, count a down
 * the lag defers (once per silence), or resend its rehab abort.
 */
export function tickDue(state: NodeState, at: number, lag: ServerLag): boolean {
  if (state.status === 'down') return false;
  const silence = silenceOf(state, at, lag);
  return (
    silence === 'down' ||
    (silence === 'deferred' && state.deferred_for !== state.last_heartbeat_at) ||
    resendDue(state, at)
  );
}

/**
 * A node silent past `offline_threshold` intervals is down, unless the server itself was behind: its heartbeats may
 * be waiting unread, or the server stood still while they came, so the window grows by the lag (ServerLag).
 */
function silenceOf(state: NodeState, at: number, lag: ServerLag): 'none' | 'deferred' | 'down' {
  const { heartbeat_interval, offline_threshold } = state.config;
  const window = offline_threshold * heartbeat_interval;
  const silent = at - state.last_heartbeat_at;
  if (silent <= window) return 'none';
  return silent > window + allowanceOf(state.config, lag) ? 'down' : 'deferred';
}

/**
 * How much of the server's lag stretches the node's clocks: a backlog up to LAG_ALLOWANCE_WINDOWS windows, a stall
 * all of it, whichever is more.
 */
function allowanceOf(config: NodeConfig, lag: ServerLag): number {
  const cap = LAG_ALLOWANCE_WINDOWS * config.offline_threshold * config.heartbeat_interval;
  return Math.max(0, Math.min(lag.backlog, cap), lag.stall);
}

/** In rehab, its abort unanswered for an interval. */
function resendDue(state: NodeState, at: number): boolean {
  return state.rehab && at - state.abort_sent_at >= state.config.heartbeat_interval;
}

type Heartbeat = Extract<NodeEvent, { type: 'heartbeat' }>;

function beat(state: NodeState, event: Heartbeat): NodeStep {
  const step = heartbeat(state, event.at, event.incarnation, event.lag);
  if (event.job !== 'unknown') return step;
  const signal = event.sequence < step.state.answered_through ? 'stale_job' : 'unknown_job';
  return move(step.state, signal, event.at, step.effects);
}

/**
 * What the beat recovers of the votes awaited (awaited-commits.ts), undefined for nothing. A beat taken as an ack
 * counts as the node's answer sent with it, for the answers' sequence.
 */
function recoverVotes(state: NodeState, event: Heartbeat): readonly VoteRecovered[] | undefined {
  const { offline_threshold, heartbeat_interval } = state.config;
  const awaiting = state.awaiting as AwaitedCommits;
  const found = recoveries(awaiting, event, event.at, offline_threshold * heartbeat_interval, event.job === 'known');
  if (awaiting.size === 0) state.awaiting = undefined;
  if (found?.some((r) => r.type === 'ack_from_heartbeat') && event.sequence > state.answered_through)
    state.answered_through = event.sequence;
  return found;
}

function heartbeat(state: NodeState, at: number, from: string, lag: ServerLag): NodeStep {
  if (from !== state.incarnation) return incarnation(state, at, from, lag);
  if (state.status === 'up') {
    state.last_heartbeat_at = at;
    return quiet(state);
  }
  return beatWhileDown(state, at, lag, NO_EFFECTS);
}

/** `aborted` ends rehab; an answer about a live job goes on to it; one holding a job no longer run resets the node. */
function answer(state: NodeState, event: Extract<NodeEvent, { type: 'answer' }>): NodeStep {
  if (event.sequence > state.answered_through) state.answered_through = event.sequence;
  if (event.job_id !== null) state.awaiting = answered(state.awaiting, event.job_id);
  const step = event.answer === 'aborted' ? move(state, 'aborted', event.at, NO_EFFECTS) : quiet(state);
  switch (event.job) {
    case 'none':
      return step;
    case 'known':
      return done(state, step.state, [...step.effects, FORWARD]);
    case 'unknown':
      if (HOLDING.has(event.answer)) return move(step.state, 'unknown_job', event.at, step.effects);
      // A result names a job the client no longer holds: it resets nothing (the node is idle), and is acknowledged.
      return done(state, step.state, [
        ...step.effects,
        UNKNOWN_JOB_ANSWER,
        ...(RESULTS.has(event.answer) ? [ACK_RESULT] : []),
      ]);
  }
}

/**
 * A heartbeat counts toward the streak when it comes at least half an interval after the previous counted one
 * (a burst proves nothing) and less than two intervals after it (a longer gap missed a beat: the streak restarts).
 * Gaps are read on the server's clock: while it reads heartbeats `lag` ms behind, a gap that long may be its own,
 * so the limit grows by the lag as the offline window does, or no node could come up during a backlog.
 */
function beatWhileDown(state: NodeState, at: number, lag: ServerLag, before: readonly NodeEffect[]): NodeStep {
  const { heartbeat_interval, online_threshold } = state.config;
  const gap = at - state.last_heartbeat_at;
  if (state.streak > 0 && gap * 2 < heartbeat_interval) return done(state, state, before);
  const counts = state.streak > 0 && gap < 2 * heartbeat_interval + allowanceOf(state.config, lag);
  state.streak = counts ? state.streak + 1 : 1;
  state.last_heartbeat_at = at;
  return move(state, state.streak >= online_threshold ? 'online' : 'beat', at, before);
}

/** Reference 2.8: a heartbeat from another client process means the client restarted. */
function incarnation(state: NodeState, at: number, to: string, lag: ServerLag): NodeStep {
  const from = state.incarnation;
  const next: NodeState = { ...state, incarnation: to, streak: 0, last_heartbeat_at: at, answered_through: 0 };
  if (from === null)
    return state.status === 'up' ? done(state, next, NO_EFFECTS) : beatWhileDown(next, at, lag, NO_EFFECTS);
  const changed: NodeEffect[] = [{ type: 'incarnation_changed', node_name: state.node_name, from, to }];
  const step = move(next, 'new_incarnation', at, changed);
  return step.state.status === 'down' ? beatWhileDown(step.state, at, lag, step.effects) : step;
}

function bucketOf(state: NodeState): Bucket {
  return state.status === 'down' ? 'down' : state.rehab ? 'rehab' : 'available';
}

/** Applies one table cell. `before` holds effects already due (an incarnation change comes first). */
function move(state: NodeState, signal: Signal, at: number, before: readonly NodeEffect[]): NodeStep {
  const from = bucketOf(state);
  const cell: Cell = MOVES[signal][from];
  let next = state;
  let effects = before;
  if (cell.to !== undefined && cell.to !== from) {
    const status: NodeStatus = cell.to === 'down' ? 'down' : 'up';
    next = {
      ...state,
      status,
      rehab: cell.to === 'rehab',
      updated_at: status === state.status ? state.updated_at : at,
      streak: 0,
      // Down, the node's jobs count it gone: none awaits its vote any more.
      awaiting: status === 'down' ? undefined : state.awaiting,
    };
    const { node_name, updated_at } = next;
    const available = isAvailable(next);
    effects = [...effects, { type: 'availability_changed', node_name, status, available, updated_at }];
  }
  if (cell.send !== undefined) {
    next.abort_sent_at = at;
    effects = [...effects, SEND_ABORT];
  }
  if (cell.ignore !== undefined) effects = [...effects, NOT_IN_REHAB];
  return done(state, next, effects);
}

function done(state: NodeState, next: NodeState, effects: readonly NodeEffect[]): NodeStep {
  return next === state && effects.length === 0 ? quiet(state) : { state: next, effects };
}
