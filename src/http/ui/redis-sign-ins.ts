// The dashboard's sessions and sign-in throttle in Redis, for a cluster: every process answers every dashboard
// request, so a sign-in made through one must open pages on all, a sign-out anywhere must end it everywhere, and
// failed passwords tried through one process must count on all. Keys sit in the global partition's slot, each with
// a time to live, so Redis forgets lapsed sessions and old failures by itself; a session is kept under its id's
// hash, so reading the keys opens no session.
import { z } from 'zod';
import { realTimers, type Timers } from '../../lib/timers.js';
import { signInKeys, uiSessionKey } from '../../store/layout.js';
import type { RedisClient } from '../../store/redis-scripts.js';
import { isToken, newToken, sessionDigest, type Session, type Sessions } from './sessions.js';
import {
  FAILURE_MEMORY_MS,
  THROTTLE_RULES,
  throttleKey,
  waitAfter,
  type SignInThrottle,
  type ThrottledBy,
  type ThrottleRule,
} from './sign-in-throttle.js';
import { PageError } from './ui-env.js';

/** What a session's key holds: only what a request needs besides the id it came with. */
const storedSession = z.object({ username: z.string(), csrf: z.string() });

export interface RedisSignInOptions {
  /** The store's key prefix: sessions are the cluster's, not one process's. */
  keyPrefix: string;
  /** How long a session lasts without a request (ui_session_timeout). */
  sessionMs: number;
  /** Longest wait for Redis (store_timeout): past it the page says so rather than hang. */
  timeoutMs: number;
  now: () => number;
  /** What bounds each wait for Redis; Node's unless a test has a clock of its own. */
  timers?: Timers;
}

export class RedisSessions implements Sessions {
  constructor(
    private readonly redis: RedisClient,
    private readonly o: RedisSignInOptions,
  ) {}

  async create(username: string): Promise<Session> {
    const session: Session = { id: newToken(), username, csrf: newToken(), expiresAt: this.o.now() + this.o.sessionMs };
    const value = JSON.stringify({ username, csrf: session.csrf } satisfies z.infer<typeof storedSession>);
    await bounded(this.o, this.redis.set(this.keyOf(session.id), value, 'PX', this.o.sessionMs));
    return session;
  }

  async use(id: string | undefined): Promise<Session | undefined> {
    // A cookie that newToken did not make cannot name a session: no round trip for it.
    if (id === undefined || !isToken(id)) return undefined;
    // Read and pushed back in one command, so a session cannot lapse between the two.
    const raw = await bounded(this.o, this.redis.getex(this.keyOf(id), 'PX', this.o.sessionMs));
    if (raw === null) return undefined;
    const stored = parsed(raw);
    if (stored === undefined) return undefined;
    return { id, ...stored, expiresAt: this.o.now() + this.o.sessionMs };
  }

  async drop(id: string): Promise<void> {
    if (isToken(id)) await bounded(this.o, this.redis.del(this.keyOf(id)));
  }

  private keyOf(id: string): string {
    return uiSessionKey(this.o.keyPrefix, sessionDigest(id));
  }
}

// KEYS: the failures' count, the wait. ARGV: how long failures are remembered, then the wait after the 1st, 2nd, ...
// failure in a row (the last for every one past). The count and the wait change together: two processes counting
// at once each see the other's failure.
const COUNT_FAILURE = `
local count = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
local wait = tonumber(ARGV[math.min(count, #ARGV - 1) + 1])
if wait > 0 then redis.call('SET', KEYS[2], count, 'PX', wait) end
return wait
`;

interface ThrottleCommands {
  uiSignInFailed(failures: string, wait: string, memoryMs: number, ...waits: number[]): Promise<number>;
}

export class RedisSignInThrottle implements SignInThrottle {
  private readonly redis: RedisClient & ThrottleCommands;
  /** The waits of each rule by failures in a row, up to the first at the ceiling: the script's table. */
  private readonly waits: Record<ThrottledBy, number[]> = {
    user: waitsOf(THROTTLE_RULES.user),
    address: waitsOf(THROTTLE_RULES.address),
  };

  constructor(
    redis: RedisClient,
    private readonly o: Pick<RedisSignInOptions, 'keyPrefix' | 'timeoutMs' | 'timers'>,
  ) {
    if (!('uiSignInFailed' in redis)) redis.defineCommand('uiSignInFailed', { lua: COUNT_FAILURE, numberOfKeys: 2 });
    this.redis = redis as RedisClient & ThrottleCommands;
  }

  async waitMs(username: string, address: string): Promise<number> {
    // PTTL answers -2 for no key: no wait.
    const waits = await bounded(
      this.o,
      Promise.all([
        this.redis.pttl(this.keys('user', username).wait),
        this.redis.pttl(this.keys('address', address).wait),
      ]),
    );
    return Math.max(0, ...waits);
  }

  async failed(username: string, address: string): Promise<void> {
    await bounded(this.o, Promise.all([this.count('user', username), this.count('address', address)]));
  }

  async succeeded(username: string): Promise<void> {
    const { failures, wait } = this.keys('user', username);
    await bounded(this.o, this.redis.del(failures, wait));
  }

  private count(by: ThrottledBy, name: string): Promise<number> {
    const { failures, wait } = this.keys(by, name);
    return this.redis.uiSignInFailed(failures, wait, FAILURE_MEMORY_MS, ...this.waits[by]);
  }

  private keys(by: ThrottledBy, name: string) {
    return signInKeys(this.o.keyPrefix, throttleKey(by, name));
  }
}

function waitsOf(rule: ThrottleRule): number[] {
  const waits: number[] = [];
  for (let count = 1; ; count += 1) {
    const wait = waitAfter(count, rule);
    waits.push(wait);
    if (wait > 0 && waitAfter(count + 1, rule) === wait) return waits;
  }
}

function parsed(raw: string): z.infer<typeof storedSession> | undefined {
  try {
    const stored = storedSession.safeParse(JSON.parse(raw));
    return stored.success ? stored.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Redis's answer within `timeoutMs`; a failure or a longer wait becomes a 503 page: a dashboard that cannot read
 * its sign-ins says so at once rather than hang or sign anyone out.
 */
async function bounded<T>(o: Pick<RedisSignInOptions, 'timeoutMs' | 'timers'>, answer: Promise<T>): Promise<T> {
  let cancel: (() => void) | undefined;
  const late = new Promise<never>((_, reject) => {
    cancel = (o.timers ?? realTimers).after(o.timeoutMs, () => reject(new Error('timed out')));
  });
  try {
    return await Promise.race([answer, late]);
  } catch (e) {
    throw new PageError(503, 'The dashboard cannot reach its store right now; try again shortly.', { cause: e });
  } finally {
    cancel?.();
  }
}
