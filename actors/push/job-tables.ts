// The per-node transition tables of a job (reference 5.4 voting, 5.5 running): rows are events, columns are
// node buckets, cells say the next status, whether the node is told to abort, or why the event is ignored.
import type { IgnoreReason, NodeEventType, NodeJobStatus } from './job-model.js';

/** `to`: the node's next status; `abort`: tell the node to drop this job; `ignore`: no move, report why. */
export interface Cell {
  readonly to?: NodeJobStatus;
  readonly abort?: true;
  readonly ignore?: IgnoreReason;
}

const KEEP: Cell = {};
const DUPLICATE: Cell = { ignore: 'duplicate_answer' };
const LATE: Cell = { ignore: 'late_answer' };
// An ack says the node holds this job although the job let it go: abort it, or it stays busy for nothing.
const LATE_HOLDING: Cell = { abort: true, ignore: 'late_answer' };
const UNAVAILABLE: Cell = { to: 'unavailable' };
const UNAVAILABLE_ABORT: Cell = { to: 'unavailable', abort: true };
const CRASHED: Cell = { to: 'crashed' };
const CRASHED_ABORT: Cell = { to: 'crashed', abort: true };

export type VoteBucket = 'new' | 'ready' | 'terminal';
export type RunBucket = 'ready' | 'running' | 'terminal';

// Reference 5.4. A node is told to abort only when its own message does not say it let the job go.
export const VOTING = {
  ack_commit: { new: { to: 'ready' }, ready: DUPLICATE, terminal: LATE_HOLDING },
  nack_commit: { new: { to: 'nacked' }, ready: UNAVAILABLE, terminal: LATE },
  ack_run: { new: UNAVAILABLE_ABORT, ready: UNAVAILABLE_ABORT, terminal: LATE_HOLDING },
  nack_run: { new: UNAVAILABLE, ready: UNAVAILABLE, terminal: LATE },
  succeeded: { new: UNAVAILABLE, ready: UNAVAILABLE, terminal: LATE },
  failed: { new: UNAVAILABLE, ready: UNAVAILABLE, terminal: LATE },
  aborted: { new: UNAVAILABLE, ready: UNAVAILABLE, terminal: LATE },
  node_down: { new: UNAVAILABLE, ready: UNAVAILABLE, terminal: KEEP },
  voting_timeout: { new: UNAVAILABLE_ABORT, ready: KEEP, terminal: KEEP },
  quorum_failed: { new: UNAVAILABLE_ABORT, ready: { to: 'was_ready', abort: true }, terminal: KEEP },
  abort: { new: { to: 'aborted', abort: true }, ready: { to: 'aborted', abort: true }, terminal: KEEP },
} satisfies Record<NodeEventType | 'voting_timeout' | 'quorum_failed' | 'abort', Record<VoteBucket, Cell>>;

// Reference 5.5, except: nack_run is `crashed` (the node did not run the command, so spec 3.2 `failed`
// would be false), and `aborted` from a running node is spec 3.2 `aborted` ("ran but stopped before completion").
export const RUNNING = {
  ack_commit: { ready: CRASHED_ABORT, running: CRASHED_ABORT, terminal: LATE_HOLDING },
  nack_commit: { ready: CRASHED, running: CRASHED, terminal: LATE },
  ack_run: { ready: { to: 'running' }, running: DUPLICATE, terminal: LATE_HOLDING },
  nack_run: { ready: CRASHED, running: CRASHED, terminal: LATE },
  succeeded: { ready: CRASHED, running: { to: 'succeeded' }, terminal: LATE },
  failed: { ready: CRASHED, running: { to: 'failed' }, terminal: LATE },
  aborted: { ready: CRASHED, running: { to: 'aborted' }, terminal: LATE },
  node_down: { ready: CRASHED, running: CRASHED, terminal: KEEP },
  run_timeout: { ready: { to: 'timed_out', abort: true }, running: { to: 'timed_out', abort: true }, terminal: KEEP },
  abort: { ready: { to: 'aborted', abort: true }, running: { to: 'aborted', abort: true }, terminal: KEEP },
} satisfies Record<NodeEventType | 'run_timeout' | 'abort', Record<RunBucket, Cell>>;

// A crashed job lets every node go (pushy_job_monitor rehabs them): by the node's own status, since the phase
// of a job whose invariants broke is not to be trusted. A ready node never ran the command.
export const CRASH = {
  new: UNAVAILABLE_ABORT,
  ready: { to: 'was_ready', abort: true },
  running: CRASHED_ABORT,
  terminal: KEEP,
} satisfies Record<'new' | 'ready' | 'running' | 'terminal', Cell>;
