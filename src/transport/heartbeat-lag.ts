// How far behind the hub reads node heartbeats, as the node machines and GET /_status see it: the lag meter, the
// timer that probes the event loop, what the heartbeat reader last said of its channel, and the downs counted with
// the lag allowed for (deferred) or past it (marked).
import type { PushLag } from '../api/status-schema.js';
import { NO_LAG, type ServerLag } from '../../actors/push/ports.js';
import { realTimers, type Timers } from '../lib/timers.js';
import { LagMeter } from './lag-meter.js';

/** The period of the timer that tells how late the event loop runs (see LagMeter). */
const LAG_PROBE_MS = 50;

export class HeartbeatLag {
  private meter: LagMeter | undefined;
  /** Stops the probe's timer, once it runs. */
  private stopProbe: (() => void) | undefined;
  /**
   * The heartbeat reader waits for a message. Seen from a timer, that means the channel was read empty: a receive
   * that finds a message waiting resolves before any timer can run.
   */
  private readerIdle = false;
  /** Nodes kept `up` past the offline window because this server lagged (one per silence). */
  private deferred = 0;
  /** Nodes marked down by their node machine here (silent past the window and the lag). */
  private marked = 0;

  constructor(
    /** How long a lag seen counts (see LagMeterOptions.holdMs): the offline window. */
    private readonly holdMs: number,
    private readonly now: () => number,
    /** What runs the probe (its readings are on `now`). */
    private readonly timers: Timers = realTimers,
  ) {}

  /** Reading starts at `at`: the lag is measured from now on. */
  start(at: number): void {
    const meter = new LagMeter({ probeMs: LAG_PROBE_MS, holdMs: this.holdMs }, at);
    this.meter = meter;
    this.stopProbe = this.timers.every(LAG_PROBE_MS, () => {
      const now = this.now();
      meter.probe(now);
      meter.channel(now, !this.readerIdle);
    });
  }

  stop(): void {
    this.stopProbe?.();
  }

  /** The heartbeat reader is about to receive; with nothing `readable`, its channel was read empty. */
  beforeReceive(readable: boolean): void {
    if (!readable) this.readerIdle = true;
  }

  /** The heartbeat reader took a message. */
  took(): void {
    this.readerIdle = false;
  }

  /** The heartbeat reader lets the event loop turn, more `readable` or not. */
  paused(readable: boolean): void {
    this.meter?.channel(this.now(), readable);
  }

  /** The lag at `at` (ms, never negative): see PushTransport.lag. */
  lag(at: number): ServerLag {
    return this.meter?.lagAt(at, !this.readerIdle) ?? NO_LAG;
  }

  downDeferred(): void {
    this.deferred += 1;
  }

  downMarked(): void {
    this.marked += 1;
  }

  figures(): PushLag {
    return {
      ...(this.meter?.figures(this.now(), !this.readerIdle) ?? { current_ms: 0, max_ms: 0 }),
      downs_deferred: this.deferred,
      downs: this.marked,
    };
  }
}
