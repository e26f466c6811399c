// Whether this thread's event loop is saturated: its utilization (the share of time not waiting for events) over
// the last period, with hysteresis so that a load near the line does not switch back and forth every period.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { realTimers, type Timers } from './timers.js';

export interface LoadGaugeOptions {
  periodMs?: number;
  /** Utilization above which an unsaturated loop becomes saturated. */
  enter?: number;
  /** Utilization below which a saturated loop stops being so. */
  leave?: number;
  /** Runs the periods; Node's timers unless a unit test moves a clock of its own. */
  timers?: Timers;
  /**
   * The loop's utilization (0 to 1) since the last call; this thread's event loop as Node measures it unless a unit
   * test says what each period was.
   */
  utilization?: () => number;
}

/** This thread's event-loop utilization since the last call (the first call: since this was made). */
function measuredUtilization(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return utilization;
  };
}

export class LoadGauge {
  private isSaturated = false;
  private readonly stopTimer: () => void;

  constructor(o: LoadGaugeOptions = {}) {
    const enter = o.enter ?? 0.9;
    const leave = o.leave ?? 0.7;
    const utilization = o.utilization ?? measuredUtilization();
    this.stopTimer = (o.timers ?? realTimers).every(
      o.periodMs ?? 100,
      () => {
        this.isSaturated = utilization() > (this.isSaturated ? leave : enter);
      },
      { unref: true },
    );
  }

  get saturated(): boolean {
    return this.isSaturated;
  }

  stop(): void {
    this.stopTimer();
  }
}
