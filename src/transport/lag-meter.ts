// How far behind this server reads node heartbeats (its lag): a node's silence within the lag may be the server's
// doing, not the node's. Two facts feed it, neither read from a node's clock: how long the heartbeat channel has
// gone without being seen empty (heartbeats queued unread), and how overdue a probe timer is (an event loop held
// up, during which heartbeats still on their way in, or sent from this very process, could not be heard). The hub
// reports what it sees and when; the meter only does the arithmetic.

export interface LagMeterOptions {
  /** The probe timer's period (ms): a probe later than this was held up by the rest. */
  probeMs: number;
  /**
   * How long a lag seen counts after it was seen (ms): a node whose heartbeat was held up needs up to an interval
   * to be heard again once the server catches up, so the hub holds a lag for an offline window.
   */
  holdMs: number;
}

export interface LagFigures {
  /** The lag that counts now: the largest seen within the hold. */
  current_ms: number;
  /** The largest lag seen since start. */
  max_ms: number;
}

export class LagMeter {
  /** When the heartbeat channel was last seen with nothing waiting unread. */
  private emptyAt: number;
  private probeAt: number;
  /** The largest lag seen within the hold, and when it was seen. */
  private peak = 0;
  private peakAt: number;
  private max = 0;

  constructor(
    private readonly o: LagMeterOptions,
    at: number,
  ) {
    this.emptyAt = at;
    this.probeAt = at;
    this.peakAt = at;
  }

  /**
   * The heartbeat channel was looked at, at `at`: `waiting`, whether messages may wait in it unread (its reader
   * found more, or is busy); not waiting, it was read empty.
   */
  channel(at: number, waiting: boolean): void {
    if (waiting) this.note(at, at - this.emptyAt);
    else this.emptyAt = at;
  }

  /** The probe timer ran at `at`. */
  probe(at: number): void {
    this.note(at, at - this.probeAt - this.o.probeMs);
    this.probeAt = at;
  }

  /**
   * The lag at `at`, the heartbeat channel `waiting` or not (as for `channel`): what is seen now (a backlog's age, a
   * probe overdue), or a larger lag seen within the hold.
   */
  lagAt(at: number, waiting: boolean): number {
    this.channel(at, waiting);
    // Asked before the probe could run (a timer due at the same turn, after a long task): the loop was held up.
    this.note(at, at - this.probeAt - this.o.probeMs);
    return this.held(at);
  }

  figures(at: number, waiting: boolean): LagFigures {
    return { current_ms: Math.round(this.lagAt(at, waiting)), max_ms: Math.round(this.max) };
  }

  private held(at: number): number {
    return at - this.peakAt <= this.o.holdMs ? this.peak : 0;
  }

  private note(at: number, lag: number): void {
    if (!(lag > 0)) return;
    if (lag > this.max) this.max = lag;
    if (lag >= this.held(at)) {
      this.peak = lag;
      this.peakAt = at;
    }
  }
}
