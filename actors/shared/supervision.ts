// Crash policies. Every actor is spawned through `spawnSupervised`, which must be told what the actor does when
// its receive function throws: a throw is a broken invariant (a bug), never a peer's bad input, so it is
// reported and counted, and the policy decides the state the actor goes on with and answers whoever waited.
// No actor stops silently, and no request waits for an answer that will never come.
import { spawn, type Ref } from 'nact';
// Actors take their queued messages several to a turn of the event loop (see turns.ts).
import './turns.js';

/** Where crashes are reported: the server logs and counts them. */
export interface CrashReporter {
  /** `fatal`: the policy itself threw and the actor was stopped. */
  crashed(actor: string, error: unknown, fatal: boolean): void;
}

export type Receive<S, M> = (state: S, msg: M, self: Ref<M>) => S | Promise<S>;

/** What the actor does about the message it threw on; returns the state it goes on with. */
export type CrashPolicy<S, M> = (state: S, msg: M, error: unknown, self: Ref<M>) => S | Promise<S>;

export interface Supervised<S, M> {
  name: string;
  initial: S;
  receive: Receive<S, M>;
  onCrash: CrashPolicy<S, M>;
}

export function spawnSupervised<S, M>(parent: Ref<unknown>, actor: Supervised<S, M>, reporter: CrashReporter): Ref<M> {
  const { name, receive, onCrash } = actor;
  return spawn(
    parent as Ref<never>,
    async (state: S, msg: M, ctx): Promise<S> => {
      try {
        return await receive(state, msg, ctx.self);
      } catch (error) {
        reporter.crashed(name, error, false);
        return onCrash(state, msg, error, ctx.self);
      }
    },
    name,
    {
      initialState: actor.initial,
      // Only a policy that throws gets here: nothing sane is left to do with the actor.
      onCrash: (_msg, error, ctx) => {
        reporter.crashed(name, error, true);
        return ctx.stop;
      },
    },
  );
}
