// Brute force against dashboard passwords: after a few failed sign-ins for one user name, or from one address,
// further attempts wait, the wait doubling with each failure up to a ceiling. A waiting attempt is refused
// before its password is checked, so guessing costs the wait; a wrong name and a wrong password count alike.

interface Failures {
  count: number;
  /** No attempt before this time (epoch ms). */
  blockedUntil: number;
  lastAt: number;
}

interface Rule {
  /** Failures in a row that start the waits. */
  failures: number;
}

const RULES = { user: { failures: 5 }, address: { failures: 20 } } satisfies Record<string, Rule>;
const FIRST_WAIT_MS = 1000;
const MAX_WAIT_MS = 5 * 60_000;
/** Failures older than this are forgotten. */
const MEMORY_MS = 15 * 60_000;
/** Most names and addresses remembered: past it the oldest are forgotten, so failures cannot fill memory. */
const MAX_ENTRIES = 10_000;

export class SignInThrottle {
  private readonly failures = new Map<string, Failures>();

  constructor(private readonly now: () => number) {}

  /** Milliseconds until `username` may try again from `address` (0: now). */
  waitMs(username: string, address: string): number {
    const now = this.now();
    const wait = (key: string) => Math.max(0, (this.failures.get(key)?.blockedUntil ?? 0) - now);
    return Math.max(wait(userKey(username)), wait(addressKey(address)));
  }

  failed(username: string, address: string): void {
    this.count(userKey(username), RULES.user);
    this.count(addressKey(address), RULES.address);
  }

  /** A right password clears the user's failures; the address keeps its own, or one good account would reset them. */
  succeeded(username: string): void {
    this.failures.delete(userKey(username));
  }

  private count(key: string, rule: Rule): void {
    const now = this.now();
    const old = this.failures.get(key);
    const count = old !== undefined && now - old.lastAt < MEMORY_MS ? old.count + 1 : 1;
    const over = count - rule.failures;
    const blockedUntil = over >= 0 ? now + Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** over) : 0;
    // Deleted first so the map's order stays oldest failure first.
    this.failures.delete(key);
    this.failures.set(key, { count, blockedUntil, lastAt: now });
    for (const [k, f] of this.failures) {
      if (this.failures.size <= MAX_ENTRIES && now - f.lastAt < MEMORY_MS) break;
      this.failures.delete(k);
    }
  }
}

const userKey = (username: string) => `user:${username}`;
const addressKey = (address: string) => `address:${address}`;
