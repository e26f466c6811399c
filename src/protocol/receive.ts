// Receive-side checks for one push-jobs message, in a fixed order, each failure a counted DropReason; plus drop counting
// and which client process holds each node (the replay guards are in replay.ts).
import { DEFAULT_MAX_BODY_SIZE, MAX_HEADER_SIZE, parseHeader } from './frames.js';
import type { ClientMessage, ServerMessage } from './messages.js';
import { checkClientMessage, checkServerMessage } from './message-check.js';
import type { Replays } from './replay.js';
import { hmacVerify } from './signing.js';

export const DROP_REASONS = [
  'frame_count',
  'oversize',
  'bad_header',
  'bad_json',
  'bad_body',
  'unknown_node',
  'bad_signature',
  'skew',
  'replay',
  'incarnation_in_use',
] as const;
export type DropReason = (typeof DROP_REASONS)[number];

/** Reference 2.6: `max_time_skew`, applied both ways here (the original client checked only the future). */
export const DEFAULT_MAX_SKEW_SECONDS = 300;
/** ZeroMQ routing ids are 1 to 255 bytes. */
const MAX_IDENTITY_SIZE = 255;

export interface DecodeOptions {
  /** True on the ROUTER side, where ZeroMQ puts the peer's routing id first. */
  expectIdentity: boolean;
  maxBodySize?: number;
  maxSkewSeconds?: number;
  /** Epoch ms; the caller may reuse one options object and update this per message. */
  now: number;
  /** The session key of a node, or undefined when it has none. Must not create anything for unknown nodes. */
  keyFor: (org: string, node: string) => Buffer | undefined;
  /** One per channel: each channel's own order is all ZeroMQ guarantees. */
  replay: Replays;
  /** Who sent the message: 'client' parses ClientMessage (on the server), 'server' parses ServerMessage (on a node). */
  schema: 'client' | 'server';
  /** On the server: which client process (incarnation) holds each node. */
  holders?: NodeHolders;
}

/** The answer of NodeHolders.check when the message may be taken, shared by every message. */
const TAKEN = Object.freeze({ ok: true as const });

/**
 * Which process of a node's client holds the node: the incarnation heard last, while it is heard. Another
 * incarnation (a second client started for the node, a client restarted, or anyone holding the session key)
 * is refused while the holder has been heard within `windowMs`, and takes the node over once the holder has
 * been silent that long. A live client is never locked out, a restarted one is back within the window, and a
 * forged incarnation cannot take a node whose client runs. Shared by both channels of the server.
 */
export class NodeHolders {
  /** By organization, then node: no key is built per message on this path. */
  private readonly holders = new Map<string, Map<string, { incarnation: string; heardAt: number }>>();

  constructor(private readonly windowMs: number) {}

  /** Whether a message of `incarnation` may be taken now; when not, how long until it may. */
  check(
    org: string,
    node: string,
    incarnation: string,
    now: number,
  ): { ok: true } | { ok: false; retryAfterMs: number } {
    const holder = this.holders.get(org)?.get(node);
    if (holder === undefined || holder.incarnation === incarnation) return TAKEN;
    const silentFor = now - holder.heardAt;
    return silentFor > this.windowMs ? TAKEN : { ok: false, retryAfterMs: this.windowMs - silentFor + 1 };
  }

  /** A message of `incarnation` was taken: it holds the node now. */
  heard(org: string, node: string, incarnation: string, now: number): void {
    let nodes = this.holders.get(org);
    if (nodes === undefined) this.holders.set(org, (nodes = new Map()));
    const holder = nodes.get(node);
    if (holder === undefined || holder.incarnation !== incarnation) nodes.set(node, { incarnation, heardAt: now });
    else holder.heardAt = now;
  }

  forgetOrg(org: string): void {
    this.holders.delete(org);
  }
}

/** `refused`: for `incarnation_in_use`, who sent it and when it may try again, so the server can tell it. */
export type Dropped = {
  ok: false;
  reason: DropReason;
  detail: string;
  refused?: { org: string; node: string; identity: Buffer | undefined; retryAfterMs: number };
};
export type Decoded<M> = { ok: true; message: M; identity?: Buffer } | Dropped;

function drop(reason: DropReason, detail: string): Dropped {
  return { ok: false, reason, detail };
}

/** A peer-chosen value made safe and short for a log line. */
function quote(v: string): string {
  return JSON.stringify(v.length > 64 ? `${v.slice(0, 64)}...` : v);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Decodes and checks one received message. The order follows the cost of each check and what it may trust:
 * frames, sizes, header, JSON, key lookup by the body's org/node (reference 2.5), HMAC over the body bytes as
 * received, and only then the message's fields, the timestamp and the sequence. Never throws for any input.
 */
export function decodeFrames(
  frames: readonly Buffer[],
  opts: DecodeOptions & { schema: 'client' },
): Decoded<ClientMessage>;
export function decodeFrames(
  frames: readonly Buffer[],
  opts: DecodeOptions & { schema: 'server' },
): Decoded<ServerMessage>;
export function decodeFrames(frames: readonly Buffer[], opts: DecodeOptions): Decoded<ClientMessage | ServerMessage>;
export function decodeFrames(frames: readonly Buffer[], opts: DecodeOptions): Decoded<ClientMessage | ServerMessage> {
  const expected = opts.expectIdentity ? 3 : 2;
  if (frames.length !== expected) return drop('frame_count', `${frames.length} frames, expected ${expected}`);
  const identity = opts.expectIdentity ? frames[0] : undefined;
  const header = frames[expected - 2];
  const body = frames[expected - 1];
  if (header === undefined || body === undefined) return drop('frame_count', 'missing frame');
  if (identity !== undefined && (identity.length === 0 || identity.length > MAX_IDENTITY_SIZE)) {
    return drop('frame_count', `routing id of ${identity.length} bytes`);
  }
  if (header.length > MAX_HEADER_SIZE) return drop('oversize', `header of ${header.length} bytes`);
  const maxBody = opts.maxBodySize ?? DEFAULT_MAX_BODY_SIZE;
  if (body.length > maxBody) return drop('oversize', `body of ${body.length} bytes, limit ${maxBody}`);

  const parsedHeader = parseHeader(header);
  if (!parsedHeader.ok) return drop('bad_header', parsedHeader.detail);

  const json = parseJson(body.toString('utf8'));
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return drop('bad_json', 'body is not a JSON object');
  const org = 'org' in json ? json.org : undefined;
  const node = 'node' in json ? json.node : undefined;
  if (typeof org !== 'string' || typeof node !== 'string') return drop('bad_body', 'org and node must be strings');

  const key = opts.keyFor(org, node);
  if (key === undefined) return drop('unknown_node', `no session key for ${quote(org)}/${quote(node)}`);
  if (!hmacVerify(key, body, parsedHeader.signature)) return drop('bad_signature', `from ${quote(org)}/${quote(node)}`);

  // Checked by hand (message-check.ts): every message of every node passes here, on the server and the tester.
  const checked = (opts.schema === 'client' ? checkClientMessage : checkServerMessage)(json as Record<string, unknown>);
  if (!checked.ok) return drop('bad_body', checked.detail);
  const { message, sentAt } = checked;
  const maxSkewMs = (opts.maxSkewSeconds ?? DEFAULT_MAX_SKEW_SECONDS) * 1000;
  if (!(Math.abs(opts.now - sentAt) <= maxSkewMs)) {
    return drop('skew', `timestamp ${message.timestamp} is ${Math.round((opts.now - sentAt) / 1000)} s off`);
  }
  // The holder before the replay guard: a refused incarnation must not retire the one that holds the node.
  const holder = opts.holders?.check(org, node, message.incarnation_id, opts.now);
  if (holder !== undefined && !holder.ok) {
    return {
      ...drop('incarnation_in_use', `${quote(org)}/${quote(node)} is held by another client process`),
      refused: { org, node, identity, retryAfterMs: holder.retryAfterMs },
    };
  }
  if (!opts.replay.accept(org, node, message.incarnation_id, message.sequence)) {
    return drop('replay', `sequence ${message.sequence} of incarnation ${message.incarnation_id} already seen`);
  }
  opts.holders?.heard(org, node, message.incarnation_id, opts.now);
  return identity === undefined ? { ok: true, message } : { ok: true, message, identity };
}

export interface DropCounterOptions {
  /** Receives at most one line per reason per interval. */
  log?: (line: string, reason: DropReason) => void;
  intervalSeconds?: number;
  now?: () => number;
}

/**
 * Counts drops per reason and logs at a limited rate: the first drop of a reason is logged at once, later ones
 * within `intervalSeconds` only counted, and the next line says how many were not logged. A flood of forged
 * traffic therefore costs a counter increment, not a log write.
 */
export class DropCounter {
  private readonly counts = new Map<DropReason, number>();
  private readonly lastLog = new Map<DropReason, number>();
  private readonly unlogged = new Map<DropReason, number>();
  private readonly log: (line: string, reason: DropReason) => void;
  private readonly intervalMs: number;
  private readonly now: () => number;

  constructor(opts: DropCounterOptions = {}) {
    this.log = opts.log ?? (() => {});
    this.intervalMs = (opts.intervalSeconds ?? 60) * 1000;
    this.now = opts.now ?? Date.now;
  }

  record(reason: DropReason, detail: string): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
    const now = this.now();
    const last = this.lastLog.get(reason);
    if (last !== undefined && now - last < this.intervalMs) {
      this.unlogged.set(reason, (this.unlogged.get(reason) ?? 0) + 1);
      return;
    }
    const skipped = this.unlogged.get(reason) ?? 0;
    this.lastLog.set(reason, now);
    this.unlogged.set(reason, 0);
    this.log(
      `dropped message (${reason}): ${detail}${skipped > 0 ? `; ${skipped} more ${reason} drops not logged` : ''}`,
      reason,
    );
  }

  count(reason: DropReason): number {
    return this.counts.get(reason) ?? 0;
  }

  /** Every reason with its count, zeros included, for a status endpoint or metrics. */
  snapshot(): Record<DropReason, number> {
    const out = {} as Record<DropReason, number>;
    for (const reason of DROP_REASONS) out[reason] = this.count(reason);
    return out;
  }
}
