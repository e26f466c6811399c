// The server's own heartbeats (spec 6: heartbeats both ways), to every node heard within the offline window. They
// are spread over the interval in slots, each node in the same slot every round, and signed a slice at a time:
// 10,000 nodes at once every 10 s would stall a job's fan-out for as long as they take to sign, and 20,000
// signatures in one go would hold the event loop for a tenth of a second and delay the nodes' own heartbeats.
import { realTimers, type Timers } from '../lib/timers.js';

/** Server heartbeats signed per turn of the event loop. */
const BEAT_SLICE = 500;
/** The length of a slot of the round (ms). */
const BEAT_SLOT_MS = 100;

/** A connected node as the heartbeats see it. */
export interface Beaten {
  /** Where to write to it; undefined until heard. */
  identity: Buffer | undefined;
  /** When its last heartbeat arrived. */
  lastBeat: number;
}

export interface BeatPorts {
  /** Every node connected now, taken at the start of each round. */
  targets(): Iterable<[string, string, Beaten]>;
  /** Signs and queues one heartbeat to the node (none when it has no live session). */
  beat(org: string, node: string, identity: Buffer, now: number): void;
  /** The start of a round: what is kept per node can be let go once stale. */
  roundStarted(now: number): void;
  now(): number;
}

export class ServerHeartbeats {
  private round: Array<[string, string, Beaten]> = [];
  private slot = 0;
  /** Stops the slots' timer, once it runs. */
  private stopSlots: (() => void) | undefined;
  private readonly slots: number;

  constructor(
    private readonly intervalMs: number,
    /** The offline window: a node silent longer is down, and not heartbeaten. */
    private readonly windowMs: number,
    private readonly ports: BeatPorts,
    /** What times the slots (the heartbeats carry `ports.now()`). */
    private readonly timers: Timers = realTimers,
  ) {
    this.slots = Math.max(1, Math.round(intervalMs / BEAT_SLOT_MS));
  }

  start(): void {
    this.stopSlots = this.timers.every(this.intervalMs / this.slots, () => this.beat());
  }

  stop(): void {
    this.stopSlots?.();
  }

  /**
   * One slot of the round, a `slots`-th of the nodes. Nodes are only added, so a node stays at about the same point
   * of the round and hears the server about once per interval.
   */
  private beat(): void {
    if (this.slot === 0) {
      this.round = [...this.ports.targets()];
      this.ports.roundStarted(this.ports.now());
    }
    const from = Math.floor((this.slot * this.round.length) / this.slots);
    const to = Math.floor(((this.slot + 1) * this.round.length) / this.slots);
    this.slot = (this.slot + 1) % this.slots;
    void this.beatSlices(this.round.slice(from, to));
  }

  private async beatSlices(targets: ReadonlyArray<[string, string, Beaten]>): Promise<void> {
    for (let i = 0; i < targets.length; i += BEAT_SLICE) {
      if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const now = this.ports.now();
      for (const [org, node, peer] of targets.slice(i, i + BEAT_SLICE)) {
        if (peer.identity && now - peer.lastBeat <= this.windowMs) this.ports.beat(org, node, peer.identity, now);
      }
    }
  }
}
