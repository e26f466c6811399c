// One simulated node: the push-jobs client's own connection (two signed ZeroMQ channels, CurveZMQ when the
// config names a server key), answering commit, run and abort as its behaviour says, and telling a sink what
// happened. Heartbeats are sent by the worker's scheduler, not by a timer per node; a result the server has not
// acknowledged (ack_result) goes again with them, as the client's does, and on new channels.
import { randomUUID } from 'node:crypto';
import { curveKeyPair } from 'zeromq';
import type { ServerMessage } from '../protocol/messages.js';
import type { DropReason } from '../protocol/receive.js';
import { GatewayReplayGuard } from '../protocol/replay.js';
import { Connection, type CurveKeys, type Sender } from '../client/connection.js';
import type { JobAnswer } from '../client/job-runner.js';
import type { PushConfig } from '../client/push-config.js';
import type { Timers } from '../lib/timers.js';
import {
  acknowledgeResult,
  holdResult,
  isResult,
  resultsToResend,
  type UnackedResults,
} from '../client/unacked-results.js';
import type { NodeBehaviour } from './behaviour.js';
import { testerTimers } from './clock.js';
import type { NodeRecorder } from './node-record.js';
import { SilenceWatch } from './follow.js';
import type { NodeLink, SharedLink } from './shared-link.js';

/** What the nodes of a worker report; the worker tallies it and passes it to the parent in batches. */
export interface NodeSink {
  commit(job: string, at: number): void;
  voted(job: string, vote: 'ack' | 'nack', at: number): void;
  run(job: string, at: number): void;
  result(job: string, result: 'succeeded' | 'failed' | 'crashed', at: number): void;
  /** `first`: the first this node has had from the server since it started. */
  serverHeartbeat(first: boolean): void;
  /** A job answer (vote, run answer, result, aborted) went to the command channel. */
  answered(): void;
  drop(reason: DropReason | 'send_skipped'): void;
  /** The server refused this node's process (`node_in_use`) for the first time: another one holds the node. */
  heldElsewhere(retryAfterMs: number): void;
  error(detail: string): void;
  crashed(node: string, at: number): void;
}

export interface NodeTimings {
  slowVoteMs: number;
  runMs: number;
}

type Held = { state: 'idle'; id: null } | { state: 'committed' | 'running'; id: string };
const IDLE: Held = { state: 'idle', id: null };
interface Asked {
  job: string;
  vote: 'deciding' | 'ack' | 'nack' | 'silent';
}

export class SimNode {
  private connection: NodeLink | null = null;
  private held: Held = IDLE;
  /** The last job that asked for this node's vote, and the vote, for a commit asked again. */
  private asked: Asked | null = null;
  private sequence = 0;
  /** Results sent and not acknowledged yet. */
  private unacked: UnackedResults = [];
  private sender: Sender;
  private curve: CurveKeys | null;
  /** What cancels each of this node's timers that has not fired yet. */
  private readonly scheduled = new Set<() => void>();
  /** Epoch ms of the last heartbeat handed to the socket. */
  lastBeatAt = 0;
  /** Down after a crash until the worker restarts it. */
  crashed = false;
  /** A server heartbeat has arrived: the connection is up (the CurveZMQ handshake done). */
  heard = false;
  /** The server has refused this process as another's node: told once, not for every refused heartbeat. */
  private refused = false;
  /** The server's silence, for fetching the config again as the client does (see follow.ts). */
  readonly watch: SilenceWatch;
  /** With --record: where this node's own record of its jobs goes. */
  record: NodeRecorder | null = null;
  /** The API server its config came from last, once fetched again (the worker's first one before that). */
  apiUrl: string | undefined;

  constructor(
    readonly name: string,
    readonly behaviour: NodeBehaviour,
    /** The config the node's channels follow; replaced by moveTo. */
    public config: PushConfig,
    private readonly org: string,
    private readonly timings: NodeTimings,
    private readonly sink: NodeSink,
    /** The connection this node shares with others, or null for one of its own. */
    private shared: SharedLink | null = null,
    /** The Curve key pair its own connections present: the one its config requests name. */
    private readonly curvePair: CurveKeys = curveKeyPair(),
    private readonly timers: Timers = testerTimers,
  ) {
    this.curve = config.curveServerKey === null || shared !== null ? null : curvePair;
    this.sender = this.newSender();
    this.watch = new SilenceWatch(config, this.timers.now());
  }

  /** Its channels are open (connected, not crashed or stopped). */
  get connected(): boolean {
    return this.connection !== null;
  }

  /** The shared connection this node is on, or null. */
  get link(): SharedLink | null {
    return this.shared;
  }

  /**
   * Channels to what a new config names (another gateway of the cluster, a restarted server, a new session key),
   * as the client reconnects after a reconfigure: the same incarnation, the held job kept, and job answers not
   * yet written carried over to the new channels of a connection of its own.
   */
  moveTo(config: PushConfig, shared: SharedLink | null): void {
    const carried = this.connection instanceof Connection ? this.connection.close() : [];
    if (!(this.connection instanceof Connection)) this.connection?.close();
    this.connection = null;
    this.config = config;
    this.shared = shared;
    if (shared === null && config.curveServerKey !== null) this.curve ??= this.curvePair;
    if (this.crashed) return; // restart() connects it
    this.connect();
    const fresh = this.connection as NodeLink | null;
    for (const answer of carried) fresh?.sendCommand(answer);
    this.resendResults(true);
  }

  connect(): void {
    this.watch.restart(this.timers.now());
    this.record?.({ event: 'connected', heartbeat: this.config.heartbeatAddr });
    if (this.shared !== null) {
      const { sender, config } = this;
      this.connection = this.shared.join({ sender, sessionKey: config.sessionKey, receive: (m) => this.receive(m) });
      return;
    }
    const replay = { heartbeat: new GatewayReplayGuard(4), command: new GatewayReplayGuard(4) };
    this.connection = new Connection(this.config, this.sender, this.curve, replay, {
      message: (_channel, m) => this.receive(m),
      drop: (reason) => {
        this.sink.drop(reason);
        this.record?.({ event: 'dropped', reason });
      },
      error: (detail) => this.sink.error(`${this.name}: ${detail}`),
    });
  }

  /** Whether a heartbeat went to the socket; one still being written makes this one skipped (a drop). */
  heartbeat(): boolean {
    const c = this.connection;
    if (c === null) return false;
    if (c.sendHeartbeat({ type: 'heartbeat', job_state: this.held.state, job_id: this.held.id })) {
      this.lastBeatAt = this.timers.now();
      this.resendResults(false);
      return true;
    }
    this.sink.drop('send_skipped');
    return false;
  }

  /** Like a killed client: both sockets closed at once, timers dropped, the held job forgotten. */
  crash(): void {
    this.record?.({ event: 'crashed', job: this.held.id });
    this.crashed = true;
    this.stop();
    this.sink.crashed(this.name, this.timers.now());
  }

  /** A new process of the same client: a fresh incarnation, the same session key. */
  restart(): void {
    this.crashed = false;
    this.refused = false;
    this.held = IDLE;
    this.asked = null;
    this.sender = this.newSender();
    this.connect();
  }

  stop(): void {
    this.cancelTimers();
    this.connection?.close();
    this.connection = null;
    this.held = IDLE;
    this.asked = null;
    this.unacked = [];
  }

  private newSender(): Sender {
    return {
      org: this.org,
      node: this.name,
      incarnationId: randomUUID(),
      nextSequence: () => ++this.sequence,
      now: Date.now,
    };
  }

  /** False when the node has no channels now (crashed or stopped): nothing was sent. */
  private send(answer: JobAnswer): boolean {
    if (this.connection === null) return false;
    this.connection.sendCommand(answer);
    this.sink.answered();
    if (isResult(answer)) this.unacked = holdResult(this.unacked, answer, this.timers.now()).results;
    return true;
  }

  /** Results not acknowledged: all again on new channels, else those unacknowledged for an offline window. */
  private resendResults(connected: boolean): void {
    const c = this.connection;
    if (c === null || this.unacked.length === 0) return;
    const everyMs = this.config.intervalMs * this.config.offlineThreshold;
    const { results, due } = resultsToResend(this.unacked, this.timers.now(), everyMs, { connected });
    this.unacked = results;
    for (const answer of due) {
      c.sendCommand(answer);
      this.sink.answered();
    }
  }

  private cancelTimers(): void {
    for (const cancel of this.scheduled) cancel();
    this.scheduled.clear();
  }

  private later(ms: number, fn: () => void): void {
    if (ms <= 0) return fn();
    const cancel = this.timers.after(ms, () => {
      this.scheduled.delete(cancel);
      fn();
    });
    this.scheduled.add(cancel);
  }

  private receive(m: ServerMessage): void {
    this.watch.heard(this.timers.now());
    switch (m.type) {
      case 'heartbeat':
        this.sink.serverHeartbeat(!this.heard);
        this.heard = true;
        return;
      case 'node_in_use':
        // Most often the nodes of a run that ended less than an offline window ago, or a crashed node's own
        // earlier process: the server takes this one once the holder has been silent that long.
        if (!this.refused) this.sink.heldElsewhere(m.retry_after_ms);
        this.refused = true;
        return;
      case 'commit':
        return this.commit(m.job_id);
      case 'run':
        return this.run(m.job_id);
      case 'abort':
        return this.abort(m.job_id);
      case 'ack_result':
        this.unacked = acknowledgeResult(this.unacked, m.job_id);
        return;
    }
  }

  private commit(job: string): void {
    const asked = this.asked;
    if (asked?.job === job) {
      // Asked again, as the server saw no answer: the same answer again once there is one, counted once.
      if (asked.vote === 'ack' && this.held.id === job) this.send({ type: 'ack_commit', job_id: job });
      else if (asked.vote === 'nack') this.send({ type: 'nack_commit', job_id: job, reason: 'busy' });
      return;
    }
    this.sink.commit(job, this.timers.now());
    const silent = this.behaviour.vote === 'silent';
    const vote: Asked = { job, vote: silent ? 'silent' : 'deciding' };
    this.asked = vote;
    if (silent) return;
    this.later(this.timings.slowVoteMs, () => {
      if (this.connection === null) return;
      if ((this.held.id !== null && this.held.id !== job) || this.behaviour.vote === 'nack') {
        vote.vote = 'nack';
        if (this.send({ type: 'nack_commit', job_id: job, reason: 'busy' }))
          this.record?.({
            event: 'refused',
            job,
            reason: this.held.id !== null ? `busy with ${this.held.id}` : 'nack',
          });
        this.sink.voted(job, 'nack', this.timers.now());
      } else {
        vote.vote = 'ack';
        this.held = { state: 'committed', id: job };
        if (this.send({ type: 'ack_commit', job_id: job })) this.record?.({ event: 'committed', job });
        this.sink.voted(job, 'ack', this.timers.now());
      }
    });
  }

  private run(job: string): void {
    this.sink.run(job, this.timers.now());
    if (this.held.id !== job) {
      if (this.send({ type: 'nack_run', job_id: job })) this.record?.({ event: 'run_refused', job });
      return;
    }
    this.held = { state: 'running', id: job };
    if (this.send({ type: 'ack_run', job_id: job })) this.record?.({ event: 'ran', job });
    const end = this.behaviour.run;
    if (end === 'crash') {
      // Give the ack a moment to leave, as a client killed mid-command would have sent it already.
      this.later(Math.max(10, this.timings.runMs), () => {
        this.sink.result(job, 'crashed', this.timers.now());
        this.crash();
      });
      return;
    }
    this.later(this.timings.runMs, () => {
      if (this.held.id !== job) return;
      this.held = IDLE;
      const failed = end === 'fail';
      const status = failed ? 'failed' : 'succeeded';
      if (this.send({ type: status, job_id: job, exit_status: failed ? 1 : 0 }))
        this.record?.({ event: 'result', job, status, exit_status: failed ? 1 : 0 });
      this.sink.result(job, failed ? 'failed' : 'succeeded', this.timers.now());
    });
  }

  /** A null job id aborts whatever the node holds (reference 2.7); the answer names that job. */
  private abort(job: string | null): void {
    const drops = job === null || job === this.held.id;
    const answer = job ?? this.held.id;
    if (drops && this.held.state !== 'idle')
      this.record?.({ event: 'aborted', job: this.held.id, phase: this.held.state });
    if (drops) {
      this.cancelTimers();
      this.held = IDLE;
    }
    this.send({ type: 'aborted', job_id: answer });
  }
}
