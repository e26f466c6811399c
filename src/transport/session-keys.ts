// Session keys of the nodes (reference 2.5): handed out by the config endpoint, looked up for every message.
// They are saved, so clients keep talking to a restarted server without fetching a new config.
//
// In a cluster a session also names the node's gateway: the one member whose sockets may hear the node. A member
// holds for verification only the keys of the nodes it is the gateway of, so a message captured at one gateway and
// replayed to another is never accepted there; and an owner reads every node's gateway, to route job messages.
// A session also names the Curve keys its node's config requests named (ccpk): the gateway's ZAP handler admits a
// connection only with one of those (admitted-keys.ts).
import { z } from 'zod';
import type { GatewayChoice } from '../cluster/gateway-ports.js';
import { newSessionKey } from '../protocol/signing.js';
import { sessionsCollection } from '../store/collections.js';
import type { Store } from '../store/store.js';
import { clientKeysField, withClientKey, type AdmittedKeys } from './admitted-keys.js';

const sessionSchema = z.object({
  key: z.string(),
  expires_at: z.number(),
  gateway: z.string().optional(),
  ccpk: clientKeysField,
});

export interface Session {
  key: Buffer;
  expiresAt: number;
  /** The member id of the node's gateway; absent on one process. */
  gateway?: string;
  /** The Curve public keys (Z85) the node named in its config requests: admitted while the session lives. */
  ccpk: string[];
}

/** An organization's keys are read whole, on a message that finds none, at most this often (ms). */
const ORG_READ_EVERY_MS = 10_000;
/** A node's key is read again, on a message that finds none, at most this often (ms). */
const NODE_READ_EVERY_MS = 5000;
/** Single keys read a second at most, whatever node names arrive (they are not verified yet). */
const NODE_READS_PER_SECOND = 500;

export class SessionKeys {
  /** The keys this process verifies with, by organization and node. */
  private readonly byOrg = new Map<string, Map<string, Session>>();
  /**
   * Sessions of nodes whose gateway is another member: never used to verify here, kept so that a config request
   * answered here hands out the same key while it is fresh.
   */
  private readonly elsewhere = new Map<string, Map<string, Session>>();
  /** Every node's gateway, for the organizations read. */
  private readonly gateways = new Map<string, Map<string, string>>();
  /** When each organization, and each `org\0node`, was last read because a message found no key. */
  private readonly readAt = new Map<string, number>();
  private budget = { second: 0, reads: 0 };
  /** The reads under way, by what they read. */
  private readonly reading = new Map<string, Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly lifetimeSeconds: number,
    private readonly now: () => number,
    /** This member's id in a cluster: it verifies only its own nodes' messages. */
    private readonly me?: string,
    /** The Curve keys this member's ZAP handler admits: those of the sessions it verifies. */
    private readonly admitted?: AdmittedKeys,
  ) {}

  async load(orgs: readonly string[]): Promise<void> {
    for (const org of orgs) {
      for (const [node, raw] of await this.store.load(sessionsCollection(org))) this.take(org, node, raw);
    }
  }

  /**
   * A message named a node with no key here: a node whose gateway this member became while another process served
   * its organization. The organization's keys are read whole when none were read lately (a fleet moving here from a
   * gateway that died), else the node's alone; both a bounded number of times, since the names are not verified.
   */
  missing(org: string, node: string): Promise<void> | undefined {
    const now = this.now();
    if (this.readAt.size > 100_000) this.readAt.clear();
    const key = `${org}\u0000${node}`;
    const under = this.reading.get(org) ?? this.reading.get(key);
    if (under !== undefined) return under;
    const second = Math.floor(now / 1000);
    if (this.budget.second !== second) this.budget = { second, reads: 0 };
    if (this.budget.reads >= NODE_READS_PER_SECOND) return undefined;
    const orgRead = this.readAt.get(org) ?? -Infinity;
    if (now - orgRead >= ORG_READ_EVERY_MS) return this.read(org, now, () => this.load([org]));
    if (now - (this.readAt.get(key) ?? -Infinity) < NODE_READ_EVERY_MS) return undefined;
    return this.read(key, now, () => this.reload(org, node));
  }

  /** One read for `what` (an organization, or `org\0node`), counted against the budget; settles, never rejects. */
  private read(what: string, now: number, read: () => Promise<void>): Promise<void> {
    this.budget.reads += 1;
    this.readAt.set(what, now);
    const reading = read()
      .catch(() => void this.readAt.delete(what))
      .finally(() => this.reading.delete(what));
    this.reading.set(what, reading);
    return reading;
  }

  /** Reads one node's session again: it was opened, renewed or moved by the organization's owner. */
  async reload(org: string, node: string): Promise<void> {
    const raw = await this.store.get(sessionsCollection(org), node);
    if (raw === undefined) this.drop(org, node);
    else this.take(org, node, raw);
  }

  /**
   * The node's key for a config request. The live key is handed out again while at least half its lifetime
   * remains: replacing it would cut off the client process that holds it (any reader may fetch a node's
   * config, reference 3), and whatever it had in flight would be dropped. Past half-life a new key, saved
   * before it is returned, replaces the old one; clients renew late in the lifetime, so that is when keys turn.
   * In a cluster `gateway` picks the node's gateway: a live session that moves keeps its key.
   */
  async open(org: string, node: string, gateway: GatewayChoice = () => undefined, ccpk?: string): Promise<Session> {
    const now = this.now();
    const live = this.byOrg.get(org)?.get(node) ?? this.elsewhere.get(org)?.get(node);
    const current = this.gateways.get(org)?.get(node);
    const chosen = gateway(current);
    const fresh = live !== undefined && (live.expiresAt - now) * 2 >= this.lifetimeSeconds * 1000;
    const keys = fresh && ccpk !== undefined ? withClientKey(live.ccpk, ccpk) : undefined;
    if (fresh && chosen === current && keys === undefined) return live;
    const session: Session = fresh
      ? { ...live, ...(chosen === undefined ? {} : { gateway: chosen }), ccpk: keys ?? live.ccpk }
      : {
          key: newSessionKey(),
          expiresAt: now + this.lifetimeSeconds * 1000,
          ...(chosen ? { gateway: chosen } : {}),
          ccpk: ccpk ? [ccpk] : [],
        };
    // Kept in memory first: a second request meanwhile adds its key to this one's rather than replacing it.
    this.set(org, node, session);
    await this.store.put(sessionsCollection(org), node, docOf(session));
    return session;
  }

  /** Writes every live session of the organizations `owned` says this process writes (the store lost them). */
  async writeBack(owned: (org: string) => boolean): Promise<void> {
    for (const org of new Set([...this.byOrg.keys(), ...this.elsewhere.keys()])) {
      if (!owned(org)) continue;
      const sessions = [...(this.byOrg.get(org) ?? []), ...(this.elsewhere.get(org) ?? [])];
      await this.store.putMany(
        sessionsCollection(org),
        sessions.map(([node, s]) => [node, docOf(s)] as const),
      );
    }
  }

  /** The node's live key; the hot path of every message, so two map lookups and a compare. */
  keyFor(org: string, node: string): Buffer | undefined {
    const s = this.byOrg.get(org)?.get(node);
    return s !== undefined && s.expiresAt > this.now() ? s.key : undefined;
  }

  /**
   * A message came from a node whose session names another gateway, not alive (`live` says): the gateway died, or
   * this process restarted in its place on its addresses. Such a session is taken over here (in memory; the owner
   * stores it, see `bind`) and its key answered; undefined for any other node.
   */
  adoptOrphan(org: string, node: string, live: (gateway: string) => boolean): Buffer | undefined {
    const s = this.elsewhere.get(org)?.get(node);
    if (s === undefined || s.gateway === undefined || live(s.gateway) || s.expiresAt <= this.now()) return undefined;
    this.set(org, node, { ...s, gateway: this.me ?? s.gateway });
    return s.key;
  }

  /** The node is connected to `gateway` now: its session names it, as stored (the owner calls this). */
  async bind(org: string, node: string, gateway: string): Promise<void> {
    const s = this.byOrg.get(org)?.get(node) ?? this.elsewhere.get(org)?.get(node);
    if (s === undefined) return;
    const bound = { ...s, gateway };
    this.set(org, node, bound);
    await this.store.put(sessionsCollection(org), node, docOf(bound));
  }

  /** The member id of the node's gateway, as last read or opened here; undefined on one process or when unknown. */
  gatewayOf(org: string, node: string): string | undefined {
    return this.gateways.get(org)?.get(node);
  }

  forgetOrg(org: string): void {
    this.byOrg.delete(org);
    this.gateways.delete(org);
    this.elsewhere.delete(org);
    this.admitted?.forgetOrg(org);
  }

  private take(org: string, node: string, raw: unknown): void {
    const parsed = sessionSchema.safeParse(raw);
    if (!parsed.success) return;
    const { key, expires_at, gateway, ccpk = [] } = parsed.data;
    this.set(org, node, {
      key: Buffer.from(key, 'base64'),
      expiresAt: expires_at,
      ...(gateway ? { gateway } : {}),
      ccpk,
    });
  }

  /** Keeps `s`: its gateway for routing, and its key for verifying where this member is the gateway. */
  private set(org: string, node: string, s: Session): void {
    if (s.gateway !== undefined) mapOf(this.gateways, org).set(node, s.gateway);
    else this.gateways.get(org)?.delete(node);
    // Admitted on every member that read the session: a Curve key a config request named only opens a connection,
    // and the messages on it verify only at the node's gateway (or where its gateway is gone, adoptOrphan).
    this.admitted?.bind(org, node, s.ccpk, s.expiresAt);
    if (s.gateway === undefined || s.gateway === this.me) {
      mapOf(this.byOrg, org).set(node, s);
      this.elsewhere.get(org)?.delete(node);
    } else {
      this.byOrg.get(org)?.delete(node);
      mapOf(this.elsewhere, org).set(node, s);
    }
  }

  private drop(org: string, node: string): void {
    this.admitted?.bind(org, node, [], 0);
    this.byOrg.get(org)?.delete(node);
    this.gateways.get(org)?.delete(node);
    this.elsewhere.get(org)?.delete(node);
  }
}

function docOf(s: Session): z.input<typeof sessionSchema> {
  return {
    key: s.key.toString('base64'),
    expires_at: s.expiresAt,
    ...(s.gateway ? { gateway: s.gateway } : {}),
    ...(s.ccpk.length > 0 ? { ccpk: s.ccpk } : {}),
  };
}

function mapOf<V>(maps: Map<string, Map<string, V>>, org: string): Map<string, V> {
  let nodes = maps.get(org);
  if (!nodes) maps.set(org, (nodes = new Map()));
  return nodes;
}
