// Job messages for nodes not reachable yet: not heard since this server started (it restarted, or the node is
// reconnecting, or it just moved to this gateway), or whose command connection was not up. Each is written when
// its node is next heard, so that a commit of a job resumed after a restart arrives; it is signed then, with the
// key of that moment (at a restart jobs resume before sessions are loaded).
//
// A message waits while its node may still be up: until the node goes down, at most as long as a node restored
// after a restart is given to reconnect, counted from when it was first sent or, if later, from when the channels
// began reading. A fleet reconnecting to a restarted server is heard over seconds, and a node whose command
// connection comes up late keeps heartbeating meanwhile.
import type { OutboundMessage } from '../protocol/node-messages.js';

/** A message on its way to a node: `at`, when its job sent it; `voteBy`, a commit's voting deadline. */
export interface Outgoing {
  message: OutboundMessage;
  at: number;
  voteBy: number | undefined;
}

/** Messages kept for a node not heard yet; a job sends a node at most commit, run and abort. */
const UNSENT_PER_NODE = 4;

export class Unsent {
  /** By `org\0node`. */
  private readonly waiting = new Map<string, Outgoing[]>();
  /** When the channels began reading: no node can be heard before, so no wait counts before. */
  private readingSince = Infinity;

  /** `lifetimeMs`: how long a message waits at most (the offline window plus the reconnection grace). */
  constructor(private readonly lifetimeMs: number) {}

  reading(at: number): void {
    this.readingSince = at;
  }

  keep(org: string, node: string, out: Outgoing): void {
    const key = nodeKey(org, node);
    const { message } = out;
    // A message sent again (a rehab abort, once an interval) replaces its earlier copy instead of crowding out
    // the others.
    const same = (w: Outgoing) => w.message.type === message.type && w.message.job_id === message.job_id;
    const waiting = (this.waiting.get(key) ?? []).filter((w) => !same(w));
    waiting.push(out);
    if (waiting.length > UNSENT_PER_NODE) waiting.shift();
    this.waiting.set(key, waiting);
  }

  /** What waited for the node and still does, taken: the node was heard and is written to now. */
  take(org: string, node: string, now: number): Outgoing[] {
    const key = nodeKey(org, node);
    const waiting = this.waiting.get(key);
    if (!waiting) return [];
    this.waiting.delete(key);
    return waiting.filter((out) => this.stillWaits(out.at, now));
  }

  /** The node went down: its jobs counted it gone, and nothing waits for it any more. */
  drop(org: string, node: string): void {
    this.waiting.delete(nodeKey(org, node));
  }

  dropOrg(org: string): void {
    const prefix = nodeKey(org, '');
    for (const key of this.waiting.keys()) if (key.startsWith(prefix)) this.waiting.delete(key);
  }

  /** Lets go what waited for nodes that never came back. */
  expire(now: number): void {
    for (const [key, kept] of this.waiting) if (!this.stillWaits(kept.at(-1)?.at ?? 0, now)) this.waiting.delete(key);
  }

  private stillWaits(at: number, now: number): boolean {
    return now - Math.max(at, this.readingSince) <= this.lifetimeMs;
  }
}

export function nodeKey(org: string, node: string): string {
  return `${org}\u0000${node}`;
}
