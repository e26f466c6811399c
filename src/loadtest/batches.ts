// What a worker has to tell its parent: the counts since its last batch and each job's tally, filled in by its
// nodes through the NodeSink and by its scheduler, taken every BATCH_MS; and the worker's worst event-loop delay
// meanwhile, once its nodes heartbeat.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Batch, JobTally, Refetches } from './ipc.js';
import type { NodeSink } from './sim-node.js';
import { tallyOf, waveTallyOf } from './tally.js';

/** Errors one batch carries at most: the first few say what went wrong. */
const ERRORS_PER_BATCH = 20;

function emptyBatch(): Omit<Batch, 'jobs'> {
  return {
    type: 'batch',
    heartbeatsSent: 0,
    answersSent: 0,
    serverHeartbeats: 0,
    nodesHeard: 0,
    drops: {},
    held: 0,
    heldUntil: 0,
    errors: [],
    flaps: [],
    crashes: [],
    refetches: { moved: 0, same: 0, failed: 0 },
    lagMaxMs: 0,
  };
}

export class Batches {
  private readonly tallies = new Map<string, JobTally>();
  private batch = emptyBatch();
  /** This worker's event-loop delay once its nodes heartbeat (provisioning's key work is not the nodes' lateness). */
  readonly lag = monitorEventLoopDelay({ resolution: 10 });

  readonly sink: NodeSink = {
    commit: (job, at) => {
      const t = tallyOf(this.tallies, job);
      t.commits += 1;
      t.firstCommitAt = Math.min(t.firstCommitAt, at);
      t.lastCommitAt = Math.max(t.lastCommitAt, at);
    },
    voted: (job, vote, at) => {
      const t = tallyOf(this.tallies, job);
      if (vote === 'ack') {
        t.acks += 1;
        t.lastAckAt = Math.max(t.lastAckAt, at);
      } else t.nacks += 1;
    },
    run: (job, at) => {
      const t = tallyOf(this.tallies, job);
      t.runs += 1;
      t.firstRunAt = Math.min(t.firstRunAt, at);
      t.lastRunAt = Math.max(t.lastRunAt, at);
    },
    result: (job, result, at) => {
      const t = tallyOf(this.tallies, job);
      t[result] += 1;
      t.lastResultAt = Math.max(t.lastResultAt, at);
    },
    serverHeartbeat: (first) => {
      this.batch.serverHeartbeats += 1;
      if (first) this.batch.nodesHeard += 1;
    },
    answered: () => (this.batch.answersSent += 1),
    drop: (reason) => (this.batch.drops[reason] = (this.batch.drops[reason] ?? 0) + 1),
    heldElsewhere: (retryAfterMs) => {
      this.batch.held += 1;
      this.batch.heldUntil = Math.max(this.batch.heldUntil, Date.now() + retryAfterMs);
    },
    error: (detail) => {
      if (this.batch.errors.length < ERRORS_PER_BATCH) this.batch.errors.push(detail);
    },
    crashed: (node, at) => this.batch.crashes.push({ node, kind: 'crash', at }),
  };

  private readonly waveSinks = new Map<number, NodeSink>();

  /** The sink of a node in wave `wave` of its jobs' rollouts (0: none): its commits, runs and results also count there. */
  sinkFor(wave: number): NodeSink {
    if (wave === 0) return this.sink;
    let sink = this.waveSinks.get(wave);
    if (sink !== undefined) return sink;
    const perJob = this.sink;
    const waveOf = (id: string) => waveTallyOf(tallyOf(this.tallies, id), wave);
    sink = {
      ...perJob,
      commit: (id, at) => {
        perJob.commit(id, at);
        const w = waveOf(id);
        w.firstCommitAt = Math.min(w.firstCommitAt, at);
      },
      run: (id, at) => {
        perJob.run(id, at);
        waveOf(id).runs += 1;
      },
      result: (id, result, at) => {
        perJob.result(id, result, at);
        if (result === 'crashed') return;
        const w = waveOf(id);
        w.reported += 1;
        w.lastResultAt = Math.max(w.lastResultAt, at);
      },
    };
    this.waveSinks.set(wave, sink);
    return sink;
  }

  heartbeatSent(): void {
    this.batch.heartbeatsSent += 1;
  }

  flapped(flap: Batch['flaps'][number]): void {
    this.batch.flaps.push(flap);
  }

  restarted(node: string, at: number): void {
    this.batch.crashes.push({ node, kind: 'restart', at });
  }

  refetched(outcome: keyof Refetches): void {
    this.batch.refetches[outcome] += 1;
  }

  /** The batch since the last one, the worst delay meanwhile in it; null when there is nothing to tell. */
  take(): Batch | null {
    const b = this.batch;
    const empty =
      this.tallies.size === 0 &&
      b.heartbeatsSent === 0 &&
      b.answersSent === 0 &&
      b.serverHeartbeats === 0 &&
      b.nodesHeard === 0 &&
      b.held === 0 &&
      b.errors.length === 0 &&
      b.flaps.length === 0 &&
      b.crashes.length === 0 &&
      b.refetches.moved + b.refetches.same + b.refetches.failed === 0 &&
      Object.keys(b.drops).length === 0;
    if (empty) return null;
    const jobs = Object.fromEntries(this.tallies);
    this.tallies.clear();
    this.batch = emptyBatch();
    // The histogram's max is 0 before its first sample, and in nanoseconds.
    b.lagMaxMs = Math.round(this.lag.max / 1e6);
    this.lag.reset();
    return { ...b, jobs };
  }
}
