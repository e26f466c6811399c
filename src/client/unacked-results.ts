// The results a node's client has reported and the server has not acknowledged yet (ack_result), as a pure value.
// A result written to a gateway that died before passing it on is lost with it, and its job would count the node
// crashed: the client sends it again after each reconnect, and at a spacing that grows while no ack comes, until
// the server says it is done with it. Only the latest few are kept; time arrives as arguments.
import type { JobAnswer } from './job-runner.js';

export type ResultAnswer = Extract<JobAnswer, { type: 'succeeded' | 'failed' }>;

/** Results kept at most: a node runs one job at a time, so more waiting means acks are not coming at all. */
export const MAX_UNACKED = 8;
/** The spacing of resends doubles up to this. */
export const MAX_RESEND_MS = 60_000;

export interface UnackedResult {
  readonly answer: ResultAnswer;
  /** When it was last handed to a connection. */
  readonly sentAt: number;
  /** Resends since then without an ack: the next waits `everyMs × 2^resends`, up to MAX_RESEND_MS. */
  readonly resends: number;
}

/** Oldest first. */
export type UnackedResults = readonly UnackedResult[];

export function isResult(answer: JobAnswer): answer is ResultAnswer {
  return answer.type === 'succeeded' || answer.type === 'failed';
}

/** A result just sent: kept until acknowledged. Answers the results kept and the job of any let go to make room. */
export function holdResult(
  results: UnackedResults,
  answer: ResultAnswer,
  at: number,
): { results: UnackedResults; dropped: string | undefined } {
  const others = results.filter((r) => r.answer.job_id !== answer.job_id);
  const kept = [...others, { answer, sentAt: at, resends: 0 }];
  const over = kept.length - MAX_UNACKED;
  return { results: over > 0 ? kept.slice(over) : kept, dropped: over > 0 ? others[0]?.answer.job_id : undefined };
}

/** The server is done with the job's result. */
export function acknowledgeResult(results: UnackedResults, jobId: string): UnackedResults {
  return results.some((r) => r.answer.job_id === jobId) ? results.filter((r) => r.answer.job_id !== jobId) : results;
}

/**
 * The results to send again at `at`: those unacknowledged for `everyMs` since they were last sent, that spacing
 * doubling with each resend. `connected`: the channels were just replaced, so every result goes again at once and
 * the spacing starts over. A result still waiting in the connection (`queued`) is not sent twice.
 */
export function resultsToResend(
  results: UnackedResults,
  at: number,
  everyMs: number,
  opts: { connected?: boolean; queued?: (answer: ResultAnswer) => boolean } = {},
): { results: UnackedResults; due: ResultAnswer[] } {
  const due: ResultAnswer[] = [];
  let changed = false;
  const next = results.map((r) => {
    const wait = Math.min(MAX_RESEND_MS, everyMs * 2 ** Math.min(r.resends, 20));
    if (opts.connected !== true && at - r.sentAt < wait) return r;
    changed = true;
    if (opts.queued?.(r.answer) !== true) due.push(r.answer);
    return { answer: r.answer, sentAt: at, resends: opts.connected === true ? 0 : r.resends + 1 };
  });
  return { results: changed ? next : results, due };
}
