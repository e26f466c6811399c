// The outcome a job must have, worked out from its nodes' behaviours and its quorum alone (spec 3.1, reference
// 5.4, 5.5), to hold against what the server reports. Nodes whose availability cannot be known in advance (a
// flapping node, one that crashed in an earlier job and is coming back) make a range of ready counts; when the
// quorum falls inside it, either outcome is right.
import type { JobStatus } from '../push/job-states.js';
import type { LoadOptions } from './options.js';
import type { NodeBehaviour } from './behaviour.js';

export interface JobNode {
  behaviour: NodeBehaviour;
  /** The node may be down or busy coming back when the job starts. */
  uncertain: boolean;
}

export interface Expectation {
  /** Any of these is a correct outcome. */
  statuses: JobStatus[];
  quorum: number;
  /** Fewest and most nodes that can vote ready. */
  readyMin: number;
  readyMax: number;
}

export interface ExpectOptions {
  slowVoteMs: number;
  votingTimeoutMs: number;
  runMs: number;
  runTimeoutMs: number;
  /** The server accepted an abort of the job before it finished. */
  aborted: boolean;
}

/** A vote or a run end this close to its timeout may land on either side of it. */
export const TIMER_MARGIN_MS = 1000;

/** The quorum as a count of `nodes`: a percentage rounds up, as the server's does. */
export function quorumCount(q: LoadOptions['quorum'], nodes: number): number {
  return q.kind === 'count' ? q.value : Math.ceil((q.value * nodes) / 100);
}

export function expectOutcome(nodes: readonly JobNode[], quorum: number, o: ExpectOptions): Expectation {
  const late = o.slowVoteMs - o.votingTimeoutMs;
  // Votes after the voting timeout count as none; close to it, they may count or not.
  const votesSurely = late < -TIMER_MARGIN_MS;
  const votesMaybe = late < TIMER_MARGIN_MS;
  let readyMin = 0;
  let readyMax = 0;
  for (const n of nodes) {
    if (n.behaviour.vote !== 'ack') continue;
    if (votesMaybe) readyMax += 1;
    if (votesSurely && !n.uncertain) readyMin += 1;
  }
  const expectation = (statuses: JobStatus[]): Expectation => ({ statuses, quorum, readyMin, readyMax });
  if (o.aborted) return expectation(['aborted']);
  const runs: JobStatus[] = [];
  // A job with nobody ready (quorum 0) completes without running anything.
  if (readyMax > 0 && o.runMs >= o.runTimeoutMs - TIMER_MARGIN_MS) runs.push('timed_out');
  if (readyMin === 0 || o.runMs < o.runTimeoutMs + TIMER_MARGIN_MS) runs.push('complete');
  if (readyMax < quorum) return expectation(['quorum_failed']);
  if (readyMin >= quorum) return expectation(runs);
  return expectation(['quorum_failed', ...runs]);
}
