// Web dashboard sign-ins: a random session id (the cookie) per sign-in, the user it speaks for, its CSRF token,
// and when it lapses. One interface, two places: memory here for the embedded file store (one process; a restart
// asks everyone to sign in again), Redis for a cluster (redis-sign-ins.ts), where every process sees every sign-in.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export interface Session {
  id: string;
  username: string;
  /** Every form of this session carries it; every POST must send it back. */
  csrf: string;
  expiresAt: number;
}

/** Where the dashboard's sessions live. Each request of a session pushes its lapse back by one timeout. */
export interface Sessions {
  create(username: string): Promise<Session>;
  /** The live session of this id, its lapse pushed back by one timeout; undefined when unknown or lapsed. */
  use(id: string | undefined): Promise<Session | undefined>;
  drop(id: string): Promise<void>;
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What a session id is, as newToken makes it: anything else is refused before it is looked up. */
export function isToken(id: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(id);
}

/** The name a session is kept under where others can read the keys: its id's hash, which opens nothing. */
export function sessionDigest(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

/** Compares a token a request sent with the one expected, in constant time. */
export function sameToken(sent: string | undefined, expected: string): boolean {
  if (sent === undefined) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export class MemorySessions implements Sessions {
  private readonly sessions = new Map<string, Session>();

  /** `timeoutMs`: how long a session lasts without a request. */
  constructor(
    private readonly timeoutMs: number,
    private readonly now: () => number,
  ) {}

  async create(username: string): Promise<Session> {
    this.sweep();
    const session: Session = { id: newToken(), username, csrf: newToken(), expiresAt: this.now() + this.timeoutMs };
    this.sessions.set(session.id, session);
    return session;
  }

  async use(id: string | undefined): Promise<Session | undefined> {
    if (id === undefined) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const now = this.now();
    if (session.expiresAt <= now) {
      this.sessions.delete(id);
      return undefined;
    }
    session.expiresAt = now + this.timeoutMs;
    return session;
  }

  async drop(id: string): Promise<void> {
    this.sessions.delete(id);
  }

  /** Lapsed sessions are forgotten when a new one starts, so the map holds only live ones and those since then. */
  private sweep(): void {
    const now = this.now();
    for (const [id, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(id);
  }
}
