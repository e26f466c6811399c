// Asking an actor and waiting for its answer: the one way the facades, first-start setup and the tree's own parts
// ask the actors something, with one timeout for all.
import { query, type Ref } from 'nact';

export const ASK_TIMEOUT_MS = 30_000;

/** Sends a request into the tree and waits for the answer. */
export function ask<M, R>(ref: Ref<M>, build: (replyTo: Ref<R>) => M, timeoutMs = ASK_TIMEOUT_MS): Promise<R> {
  return query(ref, build, timeoutMs) as Promise<R>;
}
