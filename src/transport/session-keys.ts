// Session keys of the nodes (reference 2.5): handed out by the config endpoint, looked up for every message.
// They are saved, so clients keep talking to a restarted server without fetching a new config.
import { z } from 'zod';
import { newSessionKey } from '../protocol/signing.js';
import { sessionsCollection } from '../store/collections.js';
import type { Store } from '../store/store.js';

const sessionSchema = z.object({ key: z.string(), expires_at: z.number() });

export interface Session {
  key: Buffer;
  expiresAt: number;
}

export class SessionKeys {
  private readonly byOrg = new Map<string, Map<string, Session>>();

  constructor(
    private readonly store: Store,
    private readonly lifetimeSeconds: number,
    private readonly now: () => number,
  ) {}

  async load(orgs: readonly string[]): Promise<void> {
    for (const org of orgs) {
      for (const [node, raw] of await this.store.load(sessionsCollection(org))) {
        const parsed = sessionSchema.safeParse(raw);
        if (parsed.success)
          this.set(org, node, { key: Buffer.from(parsed.data.key, 'base64'), expiresAt: parsed.data.expires_at });
      }
    }
  }

  /**
   * The node's key for a config request. The live key is handed out again while at least half its lifetime
   * remains: replacing it would cut off the client process that holds it (any reader may fetch a node's
   * config, reference 3), and whatever it had in flight would be dropped. Past half-life a new key, saved
   * before it is returned, replaces the old one; clients renew late in the lifetime, so that is when keys turn.
   */
  async open(org: string, node: string): Promise<Session> {
    const now = this.now();
    const live = this.byOrg.get(org)?.get(node);
    if (live !== undefined && (live.expiresAt - now) * 2 >= this.lifetimeSeconds * 1000) return live;
    const session = { key: newSessionKey(), expiresAt: now + this.lifetimeSeconds * 1000 };
    await this.store.put(sessionsCollection(org), node, {
      key: session.key.toString('base64'),
      expires_at: session.expiresAt,
    });
    this.set(org, node, session);
    return session;
  }

  /** Writes every live session again (the store lost them). */
  async writeBack(): Promise<void> {
    for (const [org, nodes] of this.byOrg) {
      const docs = [...nodes].map(
        ([node, s]) => [node, { key: s.key.toString('base64'), expires_at: s.expiresAt }] as const,
      );
      await this.store.putMany(sessionsCollection(org), docs);
    }
  }

  /** The node's live key; the hot path of every message, so two map lookups and a compare. */
  keyFor(org: string, node: string): Buffer | undefined {
    const s = this.byOrg.get(org)?.get(node);
    return s !== undefined && s.expiresAt > this.now() ? s.key : undefined;
  }

  private set(org: string, node: string, s: Session): void {
    let nodes = this.byOrg.get(org);
    if (!nodes) {
      nodes = new Map();
      this.byOrg.set(org, nodes);
    }
    nodes.set(node, s);
  }

  forgetOrg(org: string): void {
    this.byOrg.delete(org);
  }
}
