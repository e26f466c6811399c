// Session keys of the nodes (reference 2.5): handed out by the config endpoint, looked up for every message.
// They are saved, so clients keep talking to a restarted server without fetching a new config.
import { z } from 'zod';
import { newSessionKey } from '../protocol/signing.js';
import { sessionsCollection } from '../store/collections.js';
import type { Store } from '../store/store.js';
import { clientKeysField, withClientKey, type AdmittedKeys } from './admitted-keys.js';

const sessionSchema = z.object({ key: z.string(), expires_at: z.number(), ccpk: clientKeysField });

export interface Session {
  key: Buffer;
  expiresAt: number;
  /** The Curve public keys (Z85) the node named in its config requests: admitted while the session lives. */
  ccpk: string[];
}

export class SessionKeys {
  private readonly byOrg = new Map<string, Map<string, Session>>();

  constructor(
    private readonly store: Store,
    private readonly lifetimeSeconds: number,
    private readonly now: () => number,
    private readonly admitted?: AdmittedKeys,
  ) {}

  async load(orgs: readonly string[]): Promise<void> {
    for (const org of orgs) {
      for (const [node, raw] of await this.store.load(sessionsCollection(org))) {
        const parsed = sessionSchema.safeParse(raw);
        if (parsed.success)
          this.set(org, node, {
            key: Buffer.from(parsed.data.key, 'base64'),
            expiresAt: parsed.data.expires_at,
            ccpk: parsed.data.ccpk ?? [],
          });
      }
    }
  }

  /**
   * The node's key for a config request. The live key is handed out again while at least half its lifetime
   * remains: replacing it would cut off the client process that holds it (any reader may fetch a node's
   * config, reference 3), and whatever it had in flight would be dropped. Past half-life a new key, saved
   * before it is returned, replaces the old one; clients renew late in the lifetime, so that is when keys turn.
   * `ccpk`, the requester's Curve key, is bound to the session (saved with it) and admitted while it lives.
   */
  async open(org: string, node: string, ccpk?: string): Promise<Session> {
    const now = this.now();
    const live = this.byOrg.get(org)?.get(node);
    if (live !== undefined && (live.expiresAt - now) * 2 >= this.lifetimeSeconds * 1000) {
      const keys = ccpk === undefined ? undefined : withClientKey(live.ccpk, ccpk);
      if (keys === undefined) return live;
      // Bound in memory first: a second request meanwhile adds its key to this one's rather than replacing it.
      const bound = { ...live, ccpk: keys };
      this.set(org, node, bound);
      await this.store.put(sessionsCollection(org), node, recordOf(bound));
      return bound;
    }
    const session = { key: newSessionKey(), expiresAt: now + this.lifetimeSeconds * 1000, ccpk: ccpk ? [ccpk] : [] };
    await this.store.put(sessionsCollection(org), node, recordOf(session));
    this.set(org, node, session);
    return session;
  }

  /** Writes every live session again (the store lost them). */
  async writeBack(): Promise<void> {
    for (const [org, nodes] of this.byOrg) {
      const docs = [...nodes].map(([node, s]) => [node, recordOf(s)] as const);
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
    this.admitted?.bind(org, node, s.ccpk, s.expiresAt);
  }

  forgetOrg(org: string): void {
    this.byOrg.delete(org);
    this.admitted?.forgetOrg(org);
  }
}

function recordOf(s: Session): z.input<typeof sessionSchema> {
  return { key: s.key.toString('base64'), expires_at: s.expiresAt, ...(s.ccpk.length > 0 ? { ccpk: s.ccpk } : {}) };
}
