// The parent's side of the worker processes: forks them with their share of the nodes, adds up their batches,
// and passes on flapping and crashing nodes as they are reported.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { besideModule } from '../lib/sibling-module.js';
import type { Batch, JobTally, ParentMessage, Refetches, WorkerInit, WorkerMessage } from './ipc.js';
import { mergeTally, tallyOf } from './tally.js';

export interface FleetEvents {
  progress(provisioned: number, reused: number, connected: number): void;
  flap(node: string, kind: 'stop' | 'resume', at: number, due: number): void;
  crash(node: string, kind: 'crash' | 'restart', at: number): void;
}

export interface FleetTotals {
  heartbeatsSent: number;
  answersSent: number;
  serverHeartbeats: number;
  nodesHeard: number;
  drops: Record<string, number>;
  /** Nodes refused at first as held by another process (an earlier run's), and when the last is let go. */
  held: number;
  heldUntil: number;
  errors: string[];
  /** Configs the nodes fetched again after the server fell silent, and what came of them. */
  refetches: Refetches;
  /** The worst event-loop delay of any worker while its nodes heartbeat (ms). */
  lagMaxMs: number;
}

const STOP_TIMEOUT_MS = 120_000;

/** worker.js beside this module (worker.ts from the sources: fork passes on this process's loaders). */
const workerFile = (): string => fileURLToPath(besideModule(import.meta.url, 'worker'));

interface Member {
  child: ChildProcess;
  provisioned: number;
  reused: number;
  connected: number;
  stopped: Promise<number>;
}

export class Fleet {
  readonly tallies = new Map<string, JobTally>();
  readonly totals: FleetTotals = {
    heartbeatsSent: 0,
    answersSent: 0,
    serverHeartbeats: 0,
    nodesHeard: 0,
    drops: {},
    held: 0,
    heldUntil: 0,
    errors: [],
    refetches: { moved: 0, same: 0, failed: 0 },
    lagMaxMs: 0,
  };
  private readonly members: Member[] = [];
  private failure: ((e: Error) => void) | undefined;
  private readonly failed: Promise<never>;

  constructor(private readonly events: FleetEvents) {
    this.failed = new Promise<never>((_, reject) => (this.failure = reject));
    this.failed.catch(() => undefined);
  }

  /**
   * Forks one worker per share and resolves once every node is provisioned and its connections are opened (libzmq
   * connects in the background).
   */
  async start(shares: WorkerInit[]): Promise<void> {
    const ready = shares.map((init) => {
      const child = fork(workerFile(), [], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        serialization: 'advanced',
      });
      let connected: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (connected = resolve));
      let stoppedWith: (deleted: number) => void = () => undefined;
      const member: Member = {
        child,
        provisioned: 0,
        reused: 0,
        connected: 0,
        stopped: new Promise<number>((resolve) => (stoppedWith = resolve)),
      };
      this.members.push(member);
      child.on('message', (m: WorkerMessage) => {
        switch (m.type) {
          case 'provisioned':
            member.provisioned = m.done;
            member.reused = m.reused;
            this.progress();
            break;
          case 'connecting':
            member.connected = m.nodes;
            this.progress();
            break;
          case 'connected':
            member.connected = m.nodes;
            this.progress();
            connected();
            break;
          case 'batch':
            this.add(m);
            break;
          case 'failed':
            this.failure?.(new Error(`a worker failed: ${m.message}`));
            break;
          case 'stopped':
            stoppedWith(m.deleted);
            break;
        }
      });
      child.once('exit', (code, signal) => {
        stoppedWith(0);
        if (code !== 0) this.failure?.(new Error(`a worker exited (code ${code}, signal ${signal})`));
      });
      child.send({ ...init } satisfies ParentMessage);
      return done;
    });
    await Promise.race([Promise.all(ready), this.failed]);
  }

  get reused(): number {
    return this.members.reduce((n, m) => n + m.reused, 0);
  }

  /** Rejects when a worker fails; for racing against waits. */
  get failure$(): Promise<never> {
    return this.failed;
  }

  begin(): void {
    this.broadcast({ type: 'start' });
  }

  /** The workers' process ids, for their CPU. */
  pids(): number[] {
    return this.members.flatMap((m) => (m.child.pid === undefined ? [] : [m.child.pid]));
  }

  /** Stops every worker (each deletes its nodes first with `cleanup`); resolves with the nodes deleted. */
  async stop(cleanup: boolean): Promise<number> {
    this.failure = undefined;
    this.broadcast({ type: 'stop', cleanup });
    const all = Promise.all(this.members.map((m) => m.stopped));
    // Node's own timer: it only bounds the wait for the worker processes, which are killed after it.
    const timeout = new Promise<number[]>((resolve) => setTimeout(() => resolve([]), STOP_TIMEOUT_MS).unref());
    const deleted = await Promise.race([all, timeout]);
    for (const m of this.members) if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGKILL');
    return deleted.reduce((a, b) => a + b, 0);
  }

  /** Ends the workers at once (a failed run). */
  kill(): void {
    this.failure = undefined;
    for (const m of this.members) if (m.child.exitCode === null) m.child.kill('SIGKILL');
  }

  private broadcast(m: ParentMessage): void {
    for (const member of this.members) if (member.child.connected) member.child.send(m);
  }

  private progress(): void {
    let p = 0;
    let r = 0;
    let c = 0;
    for (const m of this.members) {
      p += m.provisioned;
      r += m.reused;
      c += m.connected;
    }
    this.events.progress(p, r, c);
  }

  private add(b: Batch): void {
    for (const [job, t] of Object.entries(b.jobs)) mergeTally(tallyOf(this.tallies, job), t);
    this.totals.heartbeatsSent += b.heartbeatsSent;
    this.totals.answersSent += b.answersSent;
    this.totals.serverHeartbeats += b.serverHeartbeats;
    this.totals.nodesHeard += b.nodesHeard;
    for (const [reason, n] of Object.entries(b.drops)) this.totals.drops[reason] = (this.totals.drops[reason] ?? 0) + n;
    this.totals.held += b.held;
    this.totals.heldUntil = Math.max(this.totals.heldUntil, b.heldUntil);
    this.totals.refetches.moved += b.refetches.moved;
    this.totals.refetches.same += b.refetches.same;
    this.totals.refetches.failed += b.refetches.failed;
    this.totals.lagMaxMs = Math.max(this.totals.lagMaxMs, b.lagMaxMs);
    for (const e of b.errors) if (this.totals.errors.length < 50) this.totals.errors.push(e);
    for (const f of b.flaps) this.events.flap(f.node, f.kind, f.at, f.due);
    for (const c of b.crashes) this.events.crash(c.node, c.kind, c.at);
  }
}
