// A node's vote on a commit, recovered when the commit or the answer was lost on the way (a restart, or the node's
// channels replaced while the commit was in flight), as a pure table over the node's heartbeats. The node's machine
// keeps the commits written and not answered (awaited-commits.ts), reads each heartbeat against them through this
// table, and its follower carries out what it says.
//
// A node heard but silent on a commit written an offline window ago (`offline_threshold` intervals: heartbeats read
// later than that would have the node down already) lost the commit or its answer. Its heartbeat says which: not
// holding the job, it is sent the commit again; holding it committed, it acked, and the heartbeat, signed like any
// answer, is taken as that ack.
import type { ClientJobState } from '../../src/protocol/messages.js';

/** A commit written to a node and not answered yet. */
export interface AwaitedVote {
  /** When it was (last) written (ms). */
  writtenAt: number;
  /** When its job stops counting votes (ms). */
  voteBy: number;
}

/** What the node's heartbeat says it holds. */
export interface HeldJob {
  job_id: string | null;
  job_state: ClientJobState;
}

/** `wait`: nothing yet; `forget`: the vote is over; `resend`: write the commit again; `ack`: take the beat as its ack. */
export type VoteRecovery = 'wait' | 'forget' | 'resend' | 'ack';

type Reading = 'recent' | 'vote_over' | 'not_held' | 'held_committed' | 'held_further';

/** The rows: what each reading of a heartbeat means for the awaited vote. */
const ROWS: Readonly<Record<Reading, VoteRecovery>> = {
  recent: 'wait', // written less than an offline window ago: the answer may be on its way
  vote_over: 'forget', // the job counts no more votes
  not_held: 'resend', // the commit never arrived
  held_committed: 'ack', // it arrived and was acked; the ack was lost
  held_further: 'wait', // the node runs the job already: its other answers tell the job
};

/** What to do about the vote awaited on `job`, on a heartbeat at `at`; `window` is the offline window (ms). */
export function recoverVote(
  job: string,
  awaited: AwaitedVote,
  beat: HeldJob,
  at: number,
  window: number,
): VoteRecovery {
  return ROWS[readBeat(job, awaited, beat, at, window)];
}

function readBeat(job: string, awaited: AwaitedVote, beat: HeldJob, at: number, window: number): Reading {
  if (at - awaited.writtenAt < window) return 'recent';
  if (at >= awaited.voteBy) return 'vote_over';
  if (beat.job_id !== job) return 'not_held';
  return beat.job_state === 'committed' ? 'held_committed' : 'held_further';
}
