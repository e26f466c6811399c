// The clock and timers of the server, its actors, its cluster wiring and push-jobs-client: a seam given to each part at
// construction, so that a unit test runs it on a clock it moves by hand (test/support/manual-clock.ts) instead of
// waiting for real time. By default, and in production, they are Node's own timers.

export interface TimerOptions {
  /** The timer does not keep the process alive (Node's `unref`). */
  unref?: boolean;
}

export interface Timers {
  /** Milliseconds on a clock that only moves forward (performance.now() for the real one): for spacing, not dates. */
  now(): number;
  /** Calls `fn` once, `ms` from now (setTimeout); returns what cancels it. */
  after(ms: number, fn: () => void, options?: TimerOptions): () => void;
  /** Calls `fn` every `ms` (setInterval); returns what stops it. */
  every(ms: number, fn: () => void, options?: TimerOptions): () => void;
}

/** Node's timers, exactly as the code called them before the seam. */
export const realTimers: Timers = {
  now: () => performance.now(),
  after(ms, fn, options) {
    const timer = setTimeout(fn, ms);
    if (options?.unref === true) timer.unref();
    return () => clearTimeout(timer);
  },
  every(ms, fn, options) {
    const timer = setInterval(fn, ms);
    if (options?.unref === true) timer.unref();
    return () => clearInterval(timer);
  },
};

export interface DelayOptions extends TimerOptions {
  /** Ends the wait early, rejecting with an AbortError as node:timers/promises does. */
  signal?: AbortSignal;
}

/** Resolves `ms` from now on `timers` (node:timers/promises' setTimeout, on the clock given). */
export function delay(timers: Timers, ms: number, options: DelayOptions = {}): Promise<void> {
  const { signal } = options;
  if (signal?.aborted === true) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const aborted = () => {
      cancel();
      reject(abortError(signal));
    };
    const cancel = timers.after(
      ms,
      () => {
        signal?.removeEventListener('abort', aborted);
        resolve();
      },
      options,
    );
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

function abortError(signal: AbortSignal | undefined): Error {
  const error = new Error('The operation was aborted', { cause: signal?.reason });
  return Object.assign(error, { name: 'AbortError', code: 'ABORT_ERR' });
}
