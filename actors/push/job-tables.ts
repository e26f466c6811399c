// The per-node transition tables of a job (reference 5.4 voting, 5.5 running): rows are events, columns are
// node buckets, cells say the next status, whether the node is told to abort, why the event is ignored, and what
// the job's feed says about it (reference 6.5).
import type { RunStatus, VoteStatus } from '../../src/api/job-feed.js';
import type { IgnoreReason, NodeEventType, NodeJobStatus } from './job-model.js';

/** What a cell tells the job's feed about its node. */
export type CellNote =
  | { readonly event: 'quorum_vote'; readonly status: VoteStatus }
  | { readonly event: 'run_complete'; readonly status: RunStatus }
  | { readonly event: 'run_start' };

/** `to`: the node's next status; `abort`: tell the node to drop this job; `ignore`: no move, report why. */
export interface Cell {
  readonly to?: NodeJobStatus;
  readonly abort?: true;
  readonly ignore?: IgnoreReason;
  readonly note?: CellNote;
}

const vote = (status: VoteStatus) => ({ event: 'quorum_vote', status }) as const;
const ran = (status: RunStatus) => ({ event: 'run_complete', status }) as const;

const KEEP: Cell = {};
const DUPLICATE: Cell = { ignore: 'duplicate_answer' };
const LATE: Cell = { ignore: 'late_answer' };
// An ack says the node holds this job although the job let it go: abort it, or it stays busy for nothing.
const LATE_HOLDING: Cell = { abort: true, ignore: 'late_answer' };
const UNAVAILABLE: Cell = { to: 'unavailable' };
const UNAVAILABLE_ABORT: Cell = { to: 'unavailable', abort: true };
const DOWN: Cell = { to: 'unavailable', note: vote('down') };
const DIED_VOTING = vote('client_died_while_voting');
const DIED_RUNNING = ran('client_died_while_running');
const CRASHED: Cell = { to: 'crashed', note: ran('crashed') };
const CRASHED_ABORT: Cell = { to: 'crashed', abort: true, note: ran('crashed') };
/** A rollout's node whose wave will not start now: it was never asked, so it is told nothing. */
const SKIPPED: Cell = { to: 'skipped' };

// `waiting`: a rollout's node in a later wave. It was never asked, so it answers nothing this job should take; what
// ends the job before its wave skips it, and going down leaves it waiting (its wave asks it when it starts).
export type VoteBucket = 'waiting' | 'new' | 'ready' | 'terminal';
export type RunBucket = 'waiting' | 'ready' | 'running' | 'terminal';

// Reference 5.4. A node is told to abort only when its own message does not say it let the job go.
export const VOTING = {
  ack_commit: {
    waiting: LATE_HOLDING,
    new: { to: 'ready', note: vote('success') },
    ready: { ...DUPLICATE, note: vote('unexpected_commit') },
    terminal: { ...LATE_HOLDING, note: DIED_VOTING },
  },
  nack_commit: {
    waiting: LATE,
    new: { to: 'nacked', note: vote('failure') },
    ready: { ...UNAVAILABLE, note: vote('lost_availibility') },
    terminal: { ...LATE, note: DIED_VOTING },
  },
  ack_run: { waiting: LATE_HOLDING, new: UNAVAILABLE_ABORT, ready: UNAVAILABLE_ABORT, terminal: LATE_HOLDING },
  nack_run: { waiting: LATE, new: UNAVAILABLE, ready: UNAVAILABLE, terminal: LATE },
  succeeded: { waiting: LATE, new: UNAVAILABLE, ready: UNAVAILABLE, terminal: LATE },
  failed: { waiting: LATE, new: UNAVAILABLE, ready: UNAVAILABLE, terminal: LATE },
  aborted: { waiting: LATE, new: UNAVAILABLE, ready: UNAVAILABLE, terminal: LATE },
  node_down: { waiting: KEEP, new: DOWN, ready: DOWN, terminal: { note: vote('down') } },
  voting_timeout: {
    waiting: KEEP,
    new: { ...UNAVAILABLE_ABORT, note: vote('voting_timeout') },
    ready: KEEP,
    terminal: KEEP,
  },
  quorum_failed: { waiting: SKIPPED, new: UNAVAILABLE_ABORT, ready: { to: 'was_ready', abort: true }, terminal: KEEP },
  abort: {
    waiting: SKIPPED,
    new: { to: 'aborted', abort: true },
    ready: { to: 'aborted', abort: true },
    terminal: KEEP,
  },
} satisfies Record<NodeEventType | 'voting_timeout' | 'quorum_failed' | 'abort', Record<VoteBucket, Cell>>;

// Reference 5.5, except: a result from a node still `ready` counts (below, where the original crashed the node), nack_run is `crashed` (the node did not run the command, so spec 3.2 `failed`
// would be false), `aborted` from a running node is spec 3.2 `aborted` ("ran but stopped before completion"), and
// a second ack_commit from a node that holds the job is a duplicate, not a crash: a commit whose answer was slow
// to arrive is asked again (push-hub.ts), and the node acks it again.
// Timed-out nodes get no feed event, as in the original; the job's `job_complete` says it.
export const RUNNING = {
  ack_commit: {
    waiting: LATE_HOLDING,
    ready: DUPLICATE,
    running: DUPLICATE,
    terminal: { ...LATE_HOLDING, note: DIED_RUNNING },
  },
  nack_commit: { waiting: LATE, ready: CRASHED, running: CRASHED, terminal: { ...LATE, note: DIED_RUNNING } },
  ack_run: {
    waiting: LATE_HOLDING,
    ready: { to: 'running', note: { event: 'run_start' } },
    running: DUPLICATE,
    terminal: { ...LATE_HOLDING, note: DIED_RUNNING },
  },
  nack_run: {
    waiting: LATE,
    ready: { to: 'crashed', note: ran('run_nacked') },
    running: { to: 'crashed', note: ran('run_nacked_while_running') },
    terminal: { ...LATE, note: DIED_RUNNING },
  },
  // A result from a node whose ack_run the job never recorded: the node ran the command (a client reports only
  // what it ran), and its ack was lost on the way or with the process that owned the job before a take-over.
  succeeded: {
    waiting: LATE,
    ready: { to: 'succeeded', note: ran('success') },
    running: { to: 'succeeded', note: ran('success') },
    terminal: { ...LATE, note: DIED_RUNNING },
  },
  failed: {
    waiting: LATE,
    ready: { to: 'failed', note: ran('failure') },
    running: { to: 'failed', note: ran('failure') },
    terminal: { ...LATE, note: DIED_RUNNING },
  },
  aborted: {
    waiting: LATE,
    ready: { to: 'aborted', note: ran('aborted') },
    running: { to: 'aborted', note: ran('aborted') },
    terminal: { ...LATE, note: DIED_RUNNING },
  },
  node_down: { waiting: KEEP, ready: CRASHED, running: CRASHED, terminal: KEEP },
  run_timeout: {
    waiting: SKIPPED,
    ready: { to: 'timed_out', abort: true },
    running: { to: 'timed_out', abort: true },
    terminal: KEEP,
  },
  abort: {
    waiting: SKIPPED,
    ready: { to: 'aborted', abort: true },
    running: { to: 'aborted', abort: true },
    terminal: KEEP,
  },
} satisfies Record<NodeEventType | 'run_timeout' | 'abort', Record<RunBucket, Cell>>;

// A crashed job lets every node go (pushy_job_monitor rehabs them): by the node's own status, since the phase
// of a job whose invariants broke is not to be trusted. A ready node never ran the command.
export const CRASH = {
  waiting: SKIPPED,
  new: UNAVAILABLE_ABORT,
  ready: { to: 'was_ready', abort: true },
  running: CRASHED_ABORT,
  terminal: KEEP,
} satisfies Record<'waiting' | 'new' | 'ready' | 'running' | 'terminal', Cell>;

// A rollout's own moves: a wave starts (its nodes are asked), or the rollout halts (the nodes left are skipped).
export const WAVES = {
  start: { waiting: { to: 'new' } },
  halt: { waiting: SKIPPED },
} satisfies Record<'start' | 'halt', Record<'waiting', Cell>>;
