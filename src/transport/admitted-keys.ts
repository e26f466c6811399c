// The Curve client keys a ZAP handler may admit (reference 2.2): those nodes named (`ccpk`) in a config request,
// each bound to the node's session and admitted while that session lives. They are saved in the session record,
// so whichever process of a cluster loads a node's session admits the node's connections too.
import { z } from 'zod';
import { realTimers, type Timers } from '../lib/timers.js';
import { curveKeyBytes } from '../protocol/z85.js';

/**
 * Keys kept per session, the latest last: the node's client process, a second client started for it, a user who
 * fetched the node's config. A client keeps its key pair for its whole run (reference 2.2), so one key each; past
 * this many, the oldest is let go and its new connections are refused until it fetches a config again.
 */
export const CLIENT_KEYS_PER_SESSION = 4;

/** The `ccpk` field of a stored session record: the Z85 keys bound to it, the latest last. */
export const clientKeysField = z.array(z.string().length(40)).max(CLIENT_KEYS_PER_SESSION).optional();

/** Why a key was refused in the handshake; counted in GET /_status under `limits.zmq.refused`. */
export type CurveRefusal = 'curve_key_unknown' | 'curve_key_expired';

/** `keys` with `ccpk` bound last, or undefined when it is bound already (nothing to save). */
export function withClientKey(keys: readonly string[], ccpk: string): string[] | undefined {
  if (keys.includes(ccpk)) return undefined;
  return [...keys, ccpk].slice(-CLIENT_KEYS_PER_SESSION);
}

interface Bound {
  /** The raw keys, as ZAP hands them over, in hex. */
  keys: string[];
  expiresAt: number;
}

/** Which keys live sessions name: looked up at every CurveZMQ handshake, so two map lookups per session named. */
export class AdmittedKeys {
  private readonly byNode = new Map<string, Bound>();
  private readonly byKey = new Map<string, Set<string>>();
  /** Handshakes waiting for their key to be named (see named), by key in hex. */
  private readonly waiting = new Map<string, Set<() => void>>();

  constructor(
    private readonly now: () => number,
    private readonly timers: Timers = realTimers,
  ) {}

  /**
   * Resolves once a session names `key` (32 raw bytes), or after `ms`. A gateway hears of a node's session from the
   * node's owner a moment after the owner answered the node's config request, and the node connects at once: its
   * handshake waits for the session rather than be refused (a client whose handshake was refused does not try
   * that connection again).
   */
  named(key: Buffer, ms: number): Promise<void> {
    const hex = key.toString('hex');
    if (this.byKey.has(hex)) return Promise.resolve();
    return new Promise((resolve) => {
      let waiters = this.waiting.get(hex);
      if (waiters === undefined) this.waiting.set(hex, (waiters = new Set()));
      const done = () => {
        cancel();
        waiters.delete(done);
        if (waiters.size === 0 && this.waiting.get(hex) === waiters) this.waiting.delete(hex);
        resolve();
      };
      const cancel = this.timers.after(ms, done, { unref: true });
      waiters.add(done);
    });
  }

  /** The node's session now names `keys` (Z85) and lives until `expiresAt`; the keys it named before are let go. */
  bind(org: string, node: string, keys: readonly string[], expiresAt: number): void {
    const id = nodeId(org, node);
    this.unbind(id);
    const raw = keys.flatMap((k) => curveKeyBytes(k)?.toString('hex') ?? []);
    if (raw.length === 0) return;
    this.byNode.set(id, { keys: raw, expiresAt });
    for (const key of raw) {
      let nodes = this.byKey.get(key);
      if (nodes === undefined) {
        nodes = new Set();
        this.byKey.set(key, nodes);
      }
      nodes.add(id);
      for (const done of [...(this.waiting.get(key) ?? [])]) done();
    }
  }

  /** The organization is no longer served here (deleted, or moved to another process). */
  forgetOrg(org: string): void {
    const prefix = nodeId(org, '');
    for (const id of [...this.byNode.keys()]) if (id.startsWith(prefix)) this.unbind(id);
  }

  /** Undefined when a live session names `key` (32 raw bytes), else why it is refused. */
  refusal(key: Buffer): CurveRefusal | undefined {
    const nodes = this.byKey.get(key.toString('hex'));
    if (nodes === undefined) return 'curve_key_unknown';
    const now = this.now();
    for (const id of nodes) if ((this.byNode.get(id)?.expiresAt ?? 0) > now) return undefined;
    return 'curve_key_expired';
  }

  private unbind(id: string): void {
    const bound = this.byNode.get(id);
    if (bound === undefined) return;
    this.byNode.delete(id);
    for (const key of bound.keys) {
      const nodes = this.byKey.get(key);
      nodes?.delete(id);
      if (nodes?.size === 0) this.byKey.delete(key);
    }
  }
}

function nodeId(org: string, node: string): string {
  return `${org}\u0000${node}`;
}
