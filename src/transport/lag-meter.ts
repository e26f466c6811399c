// How far behind this server reads node heartbeats (its lag): a node's silence within the lag may be the server's
// doing, not the node's. Two facts feed it, neither read from a node's clock, and they are kept apart: how long the
// heartbeat channel has gone without being seen empty (a backlog: heartbeats queued unread), and how overdue a probe
// timer is (a stall: the event loop held up, or the whole process paused, during which no heartbeat could be heard).
// The hub reports what it sees and when; the meter only does the arithmetic.
import type { ServerLag } from '../../actors/push/ports.js';

export interface LagMeterOptions {
  /** The probe timer's period (ms): a probe later than this was held up by the rest. */
  probeMs: number;
  /**
   * How long a lag seen counts after it was seen (ms): a node whose heartbeat was held up needs up to an interval
   * to be heard again once the server catches up, so the hub holds a lag for an offline window. A stall counts for
   * as long again as it lasted, if that is longer: the heartbeats it held up are read in less time than they took to
   * pile up (unless the server cannot keep up, which the backlog then shows).
   */
  holdMs: number;
}

export interface LagFigures {
  /** The lag that counts now: the largest seen within the hold. */
  current_ms: number;
  /** The largest lag seen since start. */
  max_ms: number;
}

/** The largest lag of one kind seen within its hold, and when it was seen. */
class Peak {
  private value = 0;
  private at: number;

  constructor(
    at: number,
    private readonly holdOf: (lag: number) => number,
  ) {
    this.at = at;
  }

  note(at: number, lag: number): void {
    if (lag >= this.held(at)) {
      this.value = lag;
      this.at = at;
    }
  }

  held(at: number): number {
    return at - this.at <= this.holdOf(this.value) ? this.value : 0;
  }
}

export class LagMeter {
  /** When the heartbeat channel was last seen with nothing waiting unread. */
  private emptyAt: number;
  private probeAt: number;
  private readonly backlog: Peak;
  private readonly stall: Peak;
  private max = 0;

  constructor(
    private readonly o: LagMeterOptions,
    at: number,
  ) {
    this.emptyAt = at;
    this.probeAt = at;
    this.backlog = new Peak(at, () => o.holdMs);
    this.stall = new Peak(at, (lag) => Math.max(o.holdMs, lag));
  }

  /**
   * The heartbeat channel was looked at, at `at`: `waiting`, whether messages may wait in it unread (its reader
   * found more, or is busy); not waiting, it was read empty.
   */
  channel(at: number, waiting: boolean): void {
    if (waiting) this.note(this.backlog, at, at - this.emptyAt);
    else this.emptyAt = at;
  }

  /** The probe timer ran at `at`. */
  probe(at: number): void {
    this.note(this.stall, at, at - this.probeAt - this.o.probeMs);
    this.probeAt = at;
  }

  /**
   * The lag at `at`, the heartbeat channel `waiting` or not (as for `channel`): what is seen now (a backlog's age, a
   * probe overdue), or a larger lag of the same kind seen within its hold.
   */
  lagAt(at: number, waiting: boolean): ServerLag {
    this.channel(at, waiting);
    // Asked before the probe could run (a timer due at the same turn, after a long task or a pause): a stall.
    this.note(this.stall, at, at - this.probeAt - this.o.probeMs);
    return { backlog: this.backlog.held(at), stall: this.stall.held(at) };
  }

  figures(at: number, waiting: boolean): LagFigures {
    const { backlog, stall } = this.lagAt(at, waiting);
    return { current_ms: Math.round(Math.max(backlog, stall)), max_ms: Math.round(this.max) };
  }

  private note(peak: Peak, at: number, lag: number): void {
    if (!(lag > 0)) return;
    if (lag > this.max) this.max = lag;
    peak.note(at, lag);
  }
}
