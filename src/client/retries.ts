// How the node's client tries again a request that failed (registration, the node object, a config): after a
// back-off that doubles from a base, with jitter, or after the wait the server asked for, each wait one that stop()
// or a server heartbeat cuts short. On the clock it is given, so that a unit test runs the tries without waiting.
import { realTimers, type Timers } from '../lib/timers.js';
import { ConfigFetchError } from './push-config.js';
import { errorMessage, type Logger } from './logger.js';
import { StartupError } from './registration.js';

/** Config retries double from one interval up to this. */
export const MAX_BACKOFF_MS = 60_000;
/** Before the first config the interval is unknown; retries start here. */
export const FIRST_BACKOFF_MS = 1000;

/** base × 2^attempt, capped, with jitter so nodes that lost the server together do not return together. */
export function backoff(baseMs: number, attempt: number, random: () => number): number {
  if (attempt < 0) return 0;
  return Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.min(attempt, 20)) * (0.5 + 0.5 * random());
}

/** What the server asked for (Retry-After, with up to half again of jitter), else the back-off. */
export function retryWait(e: unknown, baseMs: number, attempt: number, random: () => number): number {
  if (e instanceof ConfigFetchError && e.retryAfterMs !== undefined)
    return Math.min(MAX_BACKOFF_MS, e.retryAfterMs * (1 + 0.5 * random()));
  return backoff(baseMs, attempt, random);
}

export interface RetryPlan {
  /** The back-off's base, read at each failure. */
  baseMs(): number;
  /** Before each try. */
  trying?(): void;
  /** A failure no try can mend: rethrown. */
  fatal?(e: unknown): boolean;
  /** A failure; the next try comes `waitMs` later. */
  failed(e: unknown, waitMs: number): void;
}

/**
 * The tries while the client starts: from FIRST_BACKOFF_MS, as no interval is known yet. A refusal asking again
 * cannot mend (a StartupError, a config refused for good) ends the start.
 */
export function startTries(what: string, log: Logger): RetryPlan {
  return {
    baseMs: () => FIRST_BACKOFF_MS,
    fatal: (e) => e instanceof StartupError || (e instanceof ConfigFetchError && e.permanent),
    failed: (e, waitMs) => log.warn(`${what} (${errorMessage(e)}); trying again in ${Math.round(waitMs)} ms`),
  };
}

export class Retries {
  private readonly wakers = new Set<() => void>();
  private stopped = false;

  constructor(
    private readonly timers: Timers = realTimers,
    private readonly random: () => number = Math.random,
  ) {}

  /** Runs `task` until it succeeds (its result) or fails for good (rethrown); undefined once stopped. */
  async retrying<T>(task: () => Promise<T>, plan: RetryPlan): Promise<T | undefined> {
    for (let attempt = 0; !this.stopped; attempt++) {
      plan.trying?.();
      try {
        return await task();
      } catch (e) {
        if (plan.fatal?.(e) === true) throw e;
        const wait = retryWait(e, plan.baseMs(), attempt, this.random);
        plan.failed(e, wait);
        await this.pause(wait);
      }
    }
    return undefined;
  }

  /** A wait that wake() and stop() cut short. */
  pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        cancel();
        this.wakers.delete(wake);
        resolve();
      };
      const cancel = this.timers.after(ms, wake);
      this.wakers.add(wake);
    });
  }

  /** Ends every wait now: what waited tries at once. */
  wake(): void {
    for (const wake of this.wakers) wake();
  }

  /** Ends every wait, and every try after it. */
  stop(): void {
    this.stopped = true;
    this.wake();
  }
}
