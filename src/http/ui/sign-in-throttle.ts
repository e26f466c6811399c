// Brute force against dashboard passwords: after a few failed sign-ins for one user name, or from one address,
// further attempts wait, the wait doubling with each failure up to a ceiling. A waiting attempt is refused
// before its password is checked, so guessing costs the wait; a wrong name and a wrong password count alike.
// The rules are here with the in-memory count (the embedded file store: one process); a cluster counts in Redis
// (redis-sign-ins.ts), so that failures through one process count on all.

/** Where failed sign-ins are counted. */
export interface SignInThrottle {
  /** Milliseconds until `username` may try again from `address` (0: now). */
  waitMs(username: string, address: string): Promise<number>;
  failed(username: string, address: string): Promise<void>;
  /** A right password clears the user's failures; the address keeps its own, or one good account would reset them. */
  succeeded(username: string): Promise<void>;
}

export interface ThrottleRule {
  /** Failures in a row that start the waits. */
  failures: number;
}

export const THROTTLE_RULES = { user: { failures: 5 }, address: { failures: 20 } } satisfies Record<
  string,
  ThrottleRule
>;
export type ThrottledBy = keyof typeof THROTTLE_RULES;

const FIRST_WAIT_MS = 1000;
const MAX_WAIT_MS = 5 * 60_000;
/** Failures older than this are forgotten. */
export const FAILURE_MEMORY_MS = 15 * 60_000;
/** Most names and addresses remembered: past it the oldest are forgotten, so failures cannot fill memory. */
const MAX_ENTRIES = 10_000;

/** How long the `count`th failure in a row makes the next attempt wait (0: not yet). */
export function waitAfter(count: number, rule: ThrottleRule): number {
  const over = count - rule.failures;
  return over >= 0 ? Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** over) : 0;
}

interface Failures {
  count: number;
  /** No attempt before this time (epoch ms). */
  blockedUntil: number;
  lastAt: number;
}

export class MemorySignInThrottle implements SignInThrottle {
  private readonly failures = new Map<string, Failures>();

  constructor(private readonly now: () => number) {}

  async waitMs(username: string, address: string): Promise<number> {
    const now = this.now();
    const wait = (key: string) => Math.max(0, (this.failures.get(key)?.blockedUntil ?? 0) - now);
    return Math.max(wait(throttleKey('user', username)), wait(throttleKey('address', address)));
  }

  async failed(username: string, address: string): Promise<void> {
    this.count(throttleKey('user', username), THROTTLE_RULES.user);
    this.count(throttleKey('address', address), THROTTLE_RULES.address);
  }

  async succeeded(username: string): Promise<void> {
    this.failures.delete(throttleKey('user', username));
  }

  private count(key: string, rule: ThrottleRule): void {
    const now = this.now();
    const old = this.failures.get(key);
    const count = old !== undefined && now - old.lastAt < FAILURE_MEMORY_MS ? old.count + 1 : 1;
    const wait = waitAfter(count, rule);
    const blockedUntil = wait > 0 ? now + wait : 0;
    // Deleted first so the map's order stays oldest failure first.
    this.failures.delete(key);
    this.failures.set(key, { count, blockedUntil, lastAt: now });
    for (const [k, f] of this.failures) {
      if (this.failures.size <= MAX_ENTRIES && now - f.lastAt < FAILURE_MEMORY_MS) break;
      this.failures.delete(k);
    }
  }
}

/** `user:olga`, `address:10.0.0.1`: one count per name and per address. */
export function throttleKey(by: ThrottledBy, name: string): string {
  return `${by}:${name}`;
}
