// Whether this thread's event loop is saturated: its utilization (the share of time not waiting for events) over
// the last period, with hysteresis so that a load near the line does not switch back and forth every period.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

export interface LoadGaugeOptions {
  periodMs?: number;
  /** Utilization above which an unsaturated loop becomes saturated. */
  enter?: number;
  /** Utilization below which a saturated loop stops being so. */
  leave?: number;
}

export class LoadGauge {
  private last: EventLoopUtilization = performance.eventLoopUtilization();
  private isSaturated = false;
  private readonly timer: NodeJS.Timeout;

  constructor(o: LoadGaugeOptions = {}) {
    const enter = o.enter ?? 0.9;
    const leave = o.leave ?? 0.7;
    this.timer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      const { utilization } = performance.eventLoopUtilization(now, this.last);
      this.last = now;
      this.isSaturated = utilization > (this.isSaturated ? leave : enter);
    }, o.periodMs ?? 100);
    this.timer.unref();
  }

  get saturated(): boolean {
    return this.isSaturated;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
