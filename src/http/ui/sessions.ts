// Web dashboard sign-ins: a random session id (the cookie) per sign-in, the user it speaks for, its CSRF token,
// and when it lapses. Held in memory only: a restarted server asks everyone to sign in again.
import { randomBytes, timingSafeEqual } from 'node:crypto';

export interface Session {
  id: string;
  username: string;
  /** Every form of this session carries it; every POST must send it back. */
  csrf: string;
  expiresAt: number;
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Compares a token a request sent with the one expected, in constant time. */
export function sameToken(sent: string | undefined, expected: string): boolean {
  if (sent === undefined) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export class SessionStore {
  private readonly sessions = new Map<string, Session>();

  /** `timeoutMs`: how long a session lasts without a request. */
  constructor(
    private readonly timeoutMs: number,
    private readonly now: () => number,
  ) {}

  create(username: string): Session {
    this.sweep();
    const session: Session = { id: newToken(), username, csrf: newToken(), expiresAt: this.now() + this.timeoutMs };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session of this id, its lapse pushed back by one timeout; undefined when unknown or lapsed. */
  use(id: string | undefined): Session | undefined {
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

  drop(id: string): void {
    this.sessions.delete(id);
  }

  /** Lapsed sessions are forgotten when a new one starts, so the map holds only live ones and those since then. */
  private sweep(): void {
    const now = this.now();
    for (const [id, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(id);
  }
}
