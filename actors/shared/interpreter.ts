// The one runner of the pure state machines (the job's, job-machine.ts; a node's, node-machine.ts): an event steps
// the machine, (state, event) -> (state, effects), and the effects run in order, as XState's interpreter and the
// original's gen_fsm do. The machine decides; whoever runs the effects only carries them out and reports facts.
//
// Running an effect may report a fact to the same machine at once (a node's effect writes to it, and the transport
// says what it wrote): that event is queued and stepped once the effects before it have run and their state is the
// machine's, in the order sent, as XState's interpreter does. Stepped at once, it would start from the state before
// the event whose effects are running, and that event's state, set after them, would overwrite what it changed.

/** A machine's transition: pure, and never keeping the event. */
export type Step<S, E, F> = (state: S, event: E) => { readonly state: S; readonly effects: readonly F[] };

/**
 * Runs the effects of one step, in order, given the state they came from. `cause` is what the event was made from
 * (a node's answer, for one), for effects that carry part of it on.
 */
export type RunEffects<S, F, C> = (state: S, effects: readonly F[], cause: C | undefined) => void;

const QUEUED: readonly never[] = Object.freeze([]);

export class Interpreter<S, E, F, C = never> {
  /** Set while a step or its effects run: an event sent meanwhile waits in `queue`. */
  private busy = false;
  private readonly queue: Array<{ event: E; cause: C | undefined }> = [];

  constructor(
    private readonly step: Step<S, E, F>,
    private current: S,
    private readonly run: RunEffects<S, F, C>,
  ) {}

  get state(): S {
    return this.current;
  }

  /**
   * Steps the machine by `event` and runs what it says, then the events its effects sent it; returns the effects of
   * `event`, for the caller's own answer (none for an event sent while effects run: it is queued, kept as is until
   * stepped). A throw, in a step or in an effect, leaves the state as it was before that event (a machine that steps
   * in place owns that state itself), and drops the events queued behind it.
   */
  send(event: E, cause?: C): readonly F[] {
    if (this.busy) {
      this.queue.push({ event, cause });
      return QUEUED;
    }
    this.busy = true;
    try {
      const effects = this.apply(event, cause);
      for (let i = 0; i < this.queue.length; i++) {
        const next = this.queue[i] as { event: E; cause: C | undefined };
        this.apply(next.event, next.cause);
      }
      return effects;
    } finally {
      this.busy = false;
      this.queue.length = 0;
    }
  }

  /** Goes on from `state`, which no event led to (its owner gave it). */
  reset(state: S): void {
    this.current = state;
  }

  private apply(event: E, cause: C | undefined): readonly F[] {
    const { state, effects } = this.step(this.current, event);
    if (effects.length > 0) this.run(state, effects, cause);
    this.current = state;
    return effects;
  }
}
