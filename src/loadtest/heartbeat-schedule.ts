// A worker's one scheduler for all its nodes' heartbeats: every node is visited once an interval in a slot of its
// own, and the visit plays its behaviour: a crashed node comes back after a silence past the offline window; once
// the measured part has begun, a flapping node falls silent now and then, and with --late-heartbeats every node beats
// just inside that window. A visit also has a node's config fetched again once the server has been silent to it.
import type { Timers } from '../lib/timers.js';
import type { Batches } from './batches.js';
import { testerTimers } from './clock.js';
import type { SimNode } from './sim-node.js';

/** The scheduler's step: each node's heartbeat slot is one of interval / TICK_MS. */
const TICK_MS = 10;
/** Intervals a flapping node keeps beating between silences (plus up to as many again, at random). */
const FLAP_UP_INTERVALS = 3;
/** Beyond the offline threshold, intervals a flapping or crashed node stays silent. */
const SILENCE_EXTRA_INTERVALS = 2;

interface Slot {
  node: SimNode;
  visits: number;
  pausedUntil: number;
  nextPauseAt: number;
  restartAt: number;
}

export interface ScheduleDeps {
  batches: Batches;
  /** Every node heartbeats late, yet within the offline threshold. */
  lateHeartbeats: boolean;
  random: () => number;
  /** The server has been silent to `node` past the client's patience: its config is fetched again. */
  refetch(node: SimNode): void;
}

export class HeartbeatSchedule {
  private slots: Slot[] = [];
  private stopTicker: (() => void) | undefined;
  /** The measured part has begun: nodes flap and beat late only from then on. */
  private begun = false;

  constructor(
    /** The worker's nodes, all provisioned once `run` is called. */
    private readonly nodes: readonly SimNode[],
    private readonly deps: ScheduleDeps,
    private readonly timers: Timers = testerTimers,
  ) {}

  /** Every node is visited once per interval, in its own slot; time decides which slots are due. */
  run(): void {
    this.slots = this.nodes.map((node) => ({ node, visits: 0, pausedUntil: 0, nextPauseAt: 0, restartAt: 0 }));
    const first = this.nodes[0];
    if (first === undefined) return;
    const interval = first.config.intervalMs;
    const threshold = first.config.offlineThreshold;
    const slotCount = Math.max(1, Math.round(interval / TICK_MS));
    const t0 = this.timers.now();
    let visited = 0;
    this.deps.batches.lag.enable();
    this.stopTicker = this.timers.every(TICK_MS, () => {
      const at = this.timers.now();
      const due = Math.floor(((at - t0) / interval) * slotCount);
      for (; visited <= due; visited++) {
        const slot = visited % slotCount;
        for (let i = slot; i < this.slots.length; i += slotCount)
          this.visit(this.slots[i] as Slot, at, interval, threshold);
      }
    });
  }

  begin(): void {
    this.begun = true;
  }

  stop(): void {
    this.stopTicker?.();
  }

  private visit(s: Slot, at: number, interval: number, threshold: number): void {
    const node = s.node;
    s.visits += 1;
    if (node.crashed) {
      if (s.restartAt === 0) s.restartAt = at + (threshold + SILENCE_EXTRA_INTERVALS) * interval;
      if (at < s.restartAt) return;
      s.restartAt = 0;
      node.restart();
      this.deps.batches.restarted(node.name, at);
    }
    // One comparison while the server speaks; past the client's silence, the config is fetched again.
    if (node.connected && node.watch.due(at)) this.deps.refetch(node);
    if (this.begun && node.behaviour.flap && this.flapsSilent(s, at, interval, threshold)) return;
    // Late: one beat every threshold - 1 intervals, so the silence stays just inside the offline window.
    if (this.begun && this.deps.lateHeartbeats && s.visits % Math.max(1, threshold - 1) !== 0) return;
    if (node.heartbeat()) this.deps.batches.heartbeatSent();
  }

  /** A flapping node's turn: whether it is silent now, resuming or falling silent as its time comes. */
  private flapsSilent(s: Slot, at: number, interval: number, threshold: number): boolean {
    const node = s.node;
    if (s.pausedUntil > at) return true;
    if (s.pausedUntil !== 0) {
      s.pausedUntil = 0;
      s.nextPauseAt = 0;
      this.deps.batches.flapped({ node: node.name, kind: 'resume', at, due: 0 });
    }
    if (s.nextPauseAt === 0) {
      s.nextPauseAt = at + (FLAP_UP_INTERVALS + this.deps.random() * FLAP_UP_INTERVALS) * interval;
    } else if (at >= s.nextPauseAt) {
      s.pausedUntil = at + (threshold + SILENCE_EXTRA_INTERVALS) * interval;
      const due = node.lastBeatAt + threshold * interval;
      this.deps.batches.flapped({ node: node.name, kind: 'stop', at: node.lastBeatAt, due });
      return true;
    }
    return false;
  }
}
