// Replay guards: the last sequence seen per sender (org, node) and incarnation, one guard per channel (heartbeats and
// commands travel on separate sockets, so only each channel's own order is guaranteed). A server keeps a ReplayGuard
// for its nodes' client processes, of which one is live at a time; a node keeps a GatewayReplayGuard for the cluster
// members it hears, several of which speak to it in turn.

/** What decodeFrames asks of a replay guard. */
export interface Replays {
  /** Checks and, when it passes, records the message's sequence. */
  accept(org: string, node: string, incarnation: string, sequence: number): boolean;
}

interface ReplayEntry {
  incarnation: string;
  sequence: number;
  /** Incarnations this sender has left behind, newest last; their messages are replays now. */
  retired: string[];
}

/**
 * The last sequence seen per sender (org, node) and incarnation. A message passes when its sequence is above
 * the last one of its incarnation; an incarnation not seen before starts a fresh count and retires the old
 * one, so a recorded message of an earlier incarnation cannot be replayed after a restart. Memory is bounded:
 * past `maxSenders` the first-recorded sender of the first-recorded org is forgotten, and only senders whose
 * HMAC verified are ever recorded.
 */
export class ReplayGuard implements Replays {
  private readonly byOrg = new Map<string, Map<string, ReplayEntry>>();
  private count = 0;

  constructor(
    private readonly maxSenders = 100_000,
    private readonly retiredPerSender = 4,
  ) {}

  /** Checks and, when it passes, records the message's sequence. */
  accept(org: string, node: string, incarnation: string, sequence: number): boolean {
    let nodes = this.byOrg.get(org);
    const entry = nodes?.get(node);
    if (entry !== undefined) {
      if (entry.incarnation === incarnation) {
        if (sequence <= entry.sequence) return false;
        entry.sequence = sequence;
        return true;
      }
      if (entry.retired.includes(incarnation)) return false;
      entry.retired.push(entry.incarnation);
      if (entry.retired.length > this.retiredPerSender) entry.retired.shift();
      entry.incarnation = incarnation;
      entry.sequence = sequence;
      return true;
    }
    if (nodes === undefined) {
      nodes = new Map();
      this.byOrg.set(org, nodes);
    }
    nodes.set(node, { incarnation, sequence, retired: [] });
    this.count += 1;
    if (this.count > this.maxSenders) this.evictOldest();
    return true;
  }

  /** Drops what is known of a sender, e.g. when its session key is replaced. */
  forget(org: string, node: string): void {
    const nodes = this.byOrg.get(org);
    if (nodes?.delete(node) === true) {
      this.count -= 1;
      if (nodes.size === 0) this.byOrg.delete(org);
    }
  }

  get size(): number {
    return this.count;
  }

  private evictOldest(): void {
    for (const [org, nodes] of this.byOrg) {
      for (const node of nodes.keys()) {
        this.forget(org, node);
        return;
      }
    }
  }
}

/** Incarnations remembered per sender by a GatewayReplayGuard. */
const GATEWAY_INCARNATIONS = 16;

interface GatewayMarks {
  /** The last sequence seen of each incarnation heard lately, in the order first heard. */
  marks: Map<string, number>;
  /** The highest sequence of the incarnations forgotten: one not remembered must be above it. */
  floor: number;
}

/**
 * The messages of a cluster's members as one node hears them. The node moves between gateways and back, so an
 * incarnation heard before is not retired when another speaks: each keeps its own last sequence. A server's
 * sequences are its clock in microseconds, kept rising (PushHub), so they are comparable across members: an
 * incarnation not remembered (new, or forgotten past GATEWAY_INCARNATIONS) must be above the highest sequence of
 * those forgotten, and a recorded message of a forgotten one cannot be replayed.
 */
export class GatewayReplayGuard implements Replays {
  private readonly senders = new Map<string, GatewayMarks>();

  constructor(private readonly maxSenders = 100_000) {}

  accept(org: string, node: string, incarnation: string, sequence: number): boolean {
    const sender = `${org}\u0000${node}`;
    let s = this.senders.get(sender);
    if (s === undefined) {
      if (this.senders.size >= this.maxSenders) this.senders.delete(this.senders.keys().next().value as string);
      s = { marks: new Map(), floor: -1 };
      this.senders.set(sender, s);
    }
    const last = s.marks.get(incarnation) ?? s.floor;
    if (sequence <= last) return false;
    s.marks.set(incarnation, sequence);
    if (s.marks.size > GATEWAY_INCARNATIONS) {
      const [oldest, mark] = s.marks.entries().next().value as [string, number];
      s.marks.delete(oldest);
      s.floor = Math.max(s.floor, mark);
    }
    return true;
  }
}
