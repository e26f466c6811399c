// The commits written to one node, by job, until the node answers one, is sent something else for its job, or its
// vote is over: what actors/push/vote-recovery.ts reads a heartbeat against to recover a vote lost on the way.
import { recoverVote, type AwaitedVote, type VoteRecovery } from '../../actors/push/vote-recovery.js';
import type { ClientHeartbeat } from '../protocol/messages.js';
import type { Outgoing } from './unsent.js';

/** A commit written to a node and not answered yet, with what to write again. */
interface AwaitedCommit extends AwaitedVote {
  out: Outgoing;
}

export type AwaitedCommits = Map<string, AwaitedCommit>;

/** Where a commit's wait goes: into `awaiting` (made when none was), or out of it by what was written after it. */
export function written(awaiting: AwaitedCommits | undefined, out: Outgoing, at: number): AwaitedCommits | undefined {
  const { message } = out;
  if (message.type === 'commit' && out.voteBy !== undefined)
    return (awaiting ?? new Map()).set(message.job_id, { out, writtenAt: at, voteBy: out.voteBy });
  // Anything else for the job ends the wait, and so does a rehab abort: the node's jobs count it gone.
  if (message.job_id === null) return undefined;
  return answered(awaiting, message.job_id);
}

/** The node's vote in `job` is no longer awaited; undefined once none is. */
export function answered(awaiting: AwaitedCommits | undefined, job: string): AwaitedCommits | undefined {
  awaiting?.delete(job);
  return awaiting?.size === 0 ? undefined : awaiting;
}

/** Whether `out` is what the node waits to answer for its job (it failed to reach the node, so it waits no more). */
export function awaits(awaiting: AwaitedCommits | undefined, out: Outgoing): boolean {
  const job = out.message.job_id;
  return job !== null && awaiting?.get(job)?.out === out;
}

/** What vote-recovery.ts says of each awaited commit on the node's heartbeat, with the commit to write again. */
export function* recoveries(
  awaiting: AwaitedCommits,
  beat: ClientHeartbeat,
  at: number,
  window: number,
): Iterable<{ job: string; recovery: Exclude<VoteRecovery, 'wait'>; out: Outgoing }> {
  for (const [job, awaited] of awaiting) {
    const recovery = recoverVote(job, awaited, beat, at, window);
    if (recovery !== 'wait') yield { job, recovery, out: awaited.out };
  }
}
