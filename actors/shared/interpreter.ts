// The one runner of the pure state machines (the job's, job-machine.ts; a node's, node-machine.ts): an event steps
// the machine, (state, event) -> (state, effects), and the effects run in order, as XState's interpreter and the
// original's gen_fsm do. The machine decides; whoever runs the effects only carries them out and reports facts.

/** A machine's transition: pure, and never keeping the event. */
export type Step<S, E, F> = (state: S, event: E) => { readonly state: S; readonly effects: readonly F[] };

/**
 * Runs the effects of one step, in order, given the state they came from. `cause` is what the event was made from
 * (a node's answer, for one), for effects that carry part of it on.
 */
export type RunEffects<S, F, C> = (state: S, effects: readonly F[], cause: C | undefined) => void;

export class Interpreter<S, E, F, C = never> {
  constructor(
    private readonly step: Step<S, E, F>,
    private current: S,
    private readonly run: RunEffects<S, F, C>,
  ) {}

  get state(): S {
    return this.current;
  }

  /**
   * Steps the machine by `event` and runs what it says; returns the effects, for the caller's own answer. A throw,
   * in the step or in an effect, leaves the state as it was before the event (a machine that steps in place owns
   * that state itself).
   */
  send(event: E, cause?: C): readonly F[] {
    const { state, effects } = this.step(this.current, event);
    if (effects.length > 0) this.run(state, effects, cause);
    this.current = state;
    return effects;
  }

  /** Goes on from `state`, which no event led to (its owner gave it). */
  reset(state: S): void {
    this.current = state;
  }
}
