// A clock for unit tests of code that takes a Timers (src/lib/timers.ts): time moves only when the test moves it,
// and the timers that fall due on the way run in order, each at its own time. Between steps the event loop turns,
// so the promises and setImmediate callbacks of the code under test settle as they would; no test waits for time.
import type { TimerOptions, Timers } from '../../src/lib/timers.js';

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
  /** The period of an `every` timer. */
  every?: number;
}

/** One turn of the event loop: every promise settled by now has run its callbacks. */
export const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Turns of the event loop that let the code under test settle between two steps of the clock. */
const SETTLE_TURNS = 10;

async function settle(): Promise<void> {
  for (let i = 0; i < SETTLE_TURNS; i++) await turn();
}

/** Node runs a delay below 1 ms (or past the largest it takes) after 1 ms. */
function delayOf(ms: number): number {
  return ms >= 1 && ms <= 2 ** 31 - 1 ? ms : 1;
}

export class ManualClock implements Timers {
  private at: number;
  private seq = 0;
  private readonly timers = new Map<number, Pending>();

  constructor(start = 0) {
    this.at = start;
  }

  now(): number {
    return this.at;
  }

  after(ms: number, fn: () => void, _options?: TimerOptions): () => void {
    return this.add({ at: this.at + delayOf(ms), seq: this.seq++, fn });
  }

  every(ms: number, fn: () => void, _options?: TimerOptions): () => void {
    const period = delayOf(ms);
    return this.add({ at: this.at + period, seq: this.seq++, fn, every: period });
  }

  /** Timers waiting to run. */
  get pending(): number {
    return this.timers.size;
  }

  /** Moves time on by `ms`, running each timer that falls due on the way at its own time, in order. */
  async advance(ms: number): Promise<void> {
    const end = this.at + ms;
    await settle();
    for (let next = this.next(end); next !== undefined; next = this.next(end)) {
      this.fire(next);
      await settle();
    }
    this.at = end;
    await settle();
  }

  /**
   * Lets the code under test run until `holds()`: turns of the event loop first, and time moved on to the next timer
   * only once they are not enough. Throws, naming `what`, when no timer is left and it still does not hold.
   */
  async until(what: string, holds: () => boolean): Promise<void> {
    for (;;) {
      for (let i = 0; i < SETTLE_TURNS; i++) {
        if (holds()) return;
        await turn();
      }
      if (holds()) return;
      const next = this.next(Infinity);
      if (next === undefined) throw new Error(`${what}: still not so at ${this.at} ms, and no timer is left to run`);
      this.fire(next);
    }
  }

  private add(p: Pending): () => void {
    this.timers.set(p.seq, p);
    return () => this.timers.delete(p.seq);
  }

  /** The earliest timer due by `end`, if any (the first set, among those due at once). */
  private next(end: number): Pending | undefined {
    let first: Pending | undefined;
    for (const p of this.timers.values()) {
      if (p.at <= end && (first === undefined || p.at < first.at || (p.at === first.at && p.seq < first.seq)))
        first = p;
    }
    return first;
  }

  private fire(p: Pending): void {
    this.at = Math.max(this.at, p.at);
    this.timers.delete(p.seq);
    if (p.every !== undefined) this.timers.set(p.seq, { ...p, at: p.at + p.every, seq: p.seq });
    p.fn();
  }
}
