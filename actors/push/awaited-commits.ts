// The commits written to one node and not answered yet, by job: bookkeeping of the node's machine (node-machine.ts),
// kept from what the transport says it wrote, and read against each heartbeat through vote-recovery.ts to recover
// a vote lost on the way. A wait ends when the node answers for the job, is written anything else for it, or the
// write reached no connection of the node (the transport writes it again once the node is heard, and it is awaited
// from then); a rehab abort and the node going down end every wait: the node's jobs count it gone.
import type { OutboundMessage } from './ports.js';
import { recoverVote, type AwaitedVote, type HeldJob } from './vote-recovery.js';

export type CommitMessage = Extract<OutboundMessage, { type: 'commit' }>;

/** A commit written to the node and not answered yet, with what to write again. */
interface AwaitedCommit extends AwaitedVote {
  readonly message: CommitMessage;
}

export type AwaitedCommits = Map<string, AwaitedCommit>;

/** What the transport says it did with a message for the node, and a node's answer that went to its owner another way. */
export type WriteFact =
  /** The transport wrote `message` to the node; `voteBy`: a commit's voting deadline (PushTransport.send). */
  | { type: 'written'; at: number; message: OutboundMessage; voteBy: number | undefined }
  /** A message written to the node reached no connection of it: the transport keeps it to write again. */
  | { type: 'unroutable'; at: number; message: OutboundMessage }
  /** The node's answer for `job_id` went to the organization's owner through the cluster, not its follower here. */
  | { type: 'answer_relayed'; at: number; job_id: string };

/** What a heartbeat recovers of a vote: the commit to write again, or the beat taken as the node's `ack_commit`. */
export type VoteRecovered =
  | { readonly type: 'resend_commit'; readonly message: CommitMessage; readonly voteBy: number }
  /** `forward`: the job runs, and the ack goes on to it as the node's answer would. */
  | { readonly type: 'ack_from_heartbeat'; readonly job_id: string; readonly at: number; readonly forward: boolean };

/** Where the waits go after `fact`. */
export function waitsAfter(awaiting: AwaitedCommits | undefined, fact: WriteFact): AwaitedCommits | undefined {
  switch (fact.type) {
    case 'written':
      return written(awaiting, fact.message, fact.voteBy, fact.at);
    case 'unroutable':
      return unroutable(awaiting, fact.message);
    case 'answer_relayed':
      return answered(awaiting, fact.job_id);
  }
}

/** A commit with a voting deadline is awaited from when it was written (`at`); anything else ends its job's wait. */
function written(
  awaiting: AwaitedCommits | undefined,
  message: OutboundMessage,
  voteBy: number | undefined,
  at: number,
): AwaitedCommits | undefined {
  if (message.type === 'commit' && voteBy !== undefined)
    return (awaiting ?? new Map()).set(message.job_id, { message, writtenAt: at, voteBy });
  if (message.job_id === null) return undefined;
  return answered(awaiting, message.job_id);
}

/** The node's vote in `job` is no longer awaited; undefined once none is. */
export function answered(awaiting: AwaitedCommits | undefined, job: string): AwaitedCommits | undefined {
  awaiting?.delete(job);
  return awaiting?.size === 0 ? undefined : awaiting;
}

/** `message` reached no connection of the node: if it is the commit awaited, the node waits to answer it no more. */
function unroutable(awaiting: AwaitedCommits | undefined, message: OutboundMessage): AwaitedCommits | undefined {
  const job = message.job_id;
  return job !== null && awaiting?.get(job)?.message === message ? answered(awaiting, job) : awaiting;
}

/**
 * What a heartbeat at `at` recovers of the awaited votes (vote-recovery.ts; `window`: the offline window), or
 * undefined when nothing, as on most beats. The waits it settles (a vote acked, or over) end here, in place; a commit
 * written again stays awaited, from when the transport says it wrote it. `runs`: whether the job the beat holds runs.
 */
export function recoveries(
  awaiting: AwaitedCommits,
  beat: HeldJob,
  at: number,
  window: number,
  runs: boolean,
): VoteRecovered[] | undefined {
  let found: VoteRecovered[] | undefined;
  for (const [job, awaited] of awaiting) {
    const recovery = recoverVote(job, awaited, beat, at, window);
    if (recovery === 'wait') continue;
    if (recovery === 'resend') {
      (found ??= []).push({ type: 'resend_commit', message: awaited.message, voteBy: awaited.voteBy });
      continue;
    }
    awaiting.delete(job);
    if (recovery === 'ack') (found ??= []).push({ type: 'ack_from_heartbeat', job_id: job, at, forward: runs });
  }
  return found;
}
