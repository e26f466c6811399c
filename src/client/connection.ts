// The node's two ZeroMQ channels to the server: a Dealer for heartbeats and a Dealer for job messages, one
// routing id for both and a new one for each connection, CurveZMQ when the server offers it. A reconnect under the
// old routing id would have the server hand it over from the old connection to the new, a path on which libzmq
// 4.3.5 can leave the old connection open for good; the server follows a node to a new routing id (reference 1.4).
// Every message is signed, and every received one checked (frames, size, header, HMAC, schema, skew, sequence)
// before it is handed on.
import { randomBytes } from 'node:crypto';
import { Dealer } from 'zeromq';
import { messageOf } from '../lib/thrown.js';
import { delay, realTimers, type Timers } from '../lib/timers.js';
import { signedText } from '../protocol/frames.js';
import { keepaliveOptions } from '../protocol/keepalive.js';
import { enveloped, envelopeFor, type ServerMessage } from '../protocol/messages.js';
import { decodeFrames, type DecodeOptions, type DropReason } from '../protocol/receive.js';
import type { Replays } from '../protocol/replay.js';
import { readUntilClosed, worthReporting } from '../protocol/read-loop.js';
import { connectSocket } from '../protocol/socket-connect.js';
import type { JobAnswer } from './job-runner.js';
import type { PushConfig } from './push-config.js';

export type Channel = 'heartbeat' | 'command';

export interface Sender {
  org: string;
  node: string;
  /** The client's UUID for this process (reference 2.8). */
  incarnationId: string;
  /** One counter for the whole process, so sequences keep rising across reconnects. */
  nextSequence(): number;
  now(): number;
}

export interface ConnectionHandlers {
  message(channel: Channel, m: ServerMessage): void;
  drop(reason: DropReason, detail: string): void;
  /** A socket failed for another reason than a refused message. */
  error(detail: string): void;
}

/** The client's Curve key pair, made once per process (reference 2.2). */
export interface CurveKeys {
  publicKey: string;
  secretKey: string;
}

/** How long a job answer that could not be queued (no connected peer) waits before it is tried again. */
const RETRY_MS = 100;
/** How often flush() looks whether every job answer is written. */
const FLUSH_POLL_MS = 20;

export interface HeartbeatBody {
  type: 'heartbeat';
  job_state: 'idle' | 'committed' | 'running';
  job_id: string | null;
}

/** The encoded size of `answer` with the longest envelope this sender can produce. */
export function measureAnswer(sender: Sender, answer: JobAnswer): number {
  const envelope = envelopeFor(sender.org, sender.node, sender.incarnationId, Number.MAX_SAFE_INTEGER, sender.now());
  return Buffer.byteLength(JSON.stringify(enveloped(answer, envelope)));
}

/** Seconds a connection whose server host stopped answering stays open (the server's default idle_timeout). */
const KEEPALIVE_SECONDS = 60;

/** The options of both of a client's Dealers; only their queue depth differs. */
export function dealerOptions(config: PushConfig, routingId: string, curve: CurveKeys | null) {
  const curveOptions =
    curve === null || config.curveServerKey === null
      ? {}
      : { curveServerKey: config.curveServerKey, curvePublicKey: curve.publicKey, curveSecretKey: curve.secretKey };
  // immediate: messages queue only on a finished (encrypted) connection, so nothing stale piles up while the
  // server is away (the original's buffered heartbeats flooded a restarted server, reference 10.1).
  // sendTimeout 0: a send that cannot be queued fails at once instead of blocking the writer.
  // No ZMTP heartbeats: the push-jobs heartbeats already tell a silent server (the client then fetches its config
  // and opens new channels), and libzmq's PING and PONG, encrypted each second on every connection, cost both
  // sides more CPU than the heartbeats themselves. TCP keepalives close a connection whose server host vanished
  // even where no reconfigure replaces it, as the server's default idle_timeout does on its side.
  return {
    routingId,
    linger: 0,
    immediate: true,
    sendTimeout: 0,
    ...keepaliveOptions(KEEPALIVE_SECONDS),
    ...curveOptions,
  };
}

/** One message from `sender`: its envelope with the next sequence, signed with `key`. */
export function signedFrames(sender: Sender, key: Buffer, body: object): [string, string] {
  const { org, node, incarnationId, nextSequence, now } = sender;
  return signedText(enveloped(body, envelopeFor(org, node, incarnationId, nextSequence(), now())), key);
}

export class Connection {
  private readonly heartbeat: Dealer;
  private readonly command: Dealer;
  private readonly pending: JobAnswer[];
  private writing = false;
  private heartbeatBusy = false;
  private closed = false;

  constructor(
    private readonly config: PushConfig,
    private readonly sender: Sender,
    curve: CurveKeys | null,
    replay: Record<Channel, Replays>,
    private readonly handlers: ConnectionHandlers,
    carried: JobAnswer[] = [],
    private readonly timers: Timers = realTimers,
  ) {
    // 16 random bytes, hex: the server routes to both channels by it.
    const options = dealerOptions(config, randomBytes(16).toString('hex'), curve);
    this.heartbeat = new Dealer({ ...options, sendHighWaterMark: 4 });
    this.command = new Dealer({ ...options, sendHighWaterMark: 1000 });
    connectSocket(this.heartbeat, config.heartbeatAddr);
    connectSocket(this.command, config.commandAddr);
    this.pending = [...carried];
    void this.receive(this.heartbeat, 'heartbeat', replay.heartbeat);
    void this.receive(this.command, 'command', replay.command);
    void this.drain();
  }

  /**
   * A heartbeat is skipped, not queued, while the previous one is still being written: only the latest matters.
   * Returns whether this one was handed to the socket.
   */
  sendHeartbeat(body: HeartbeatBody): boolean {
    if (this.closed || this.heartbeatBusy) return false;
    this.heartbeatBusy = true;
    this.heartbeat.send(this.frames(body)).then(
      () => (this.heartbeatBusy = false),
      () => (this.heartbeatBusy = false),
    );
    return true;
  }

  /** Job answers are kept, in order, until written; a reconnect carries the unwritten ones over. */
  sendCommand(answer: JobAnswer): void {
    if (this.closed) return;
    this.pending.push(answer);
    void this.drain();
  }

  /** Whether `answer` (this very object) waits to be written. */
  queued(answer: JobAnswer): boolean {
    return this.pending.includes(answer);
  }

  /** Closes both sockets; `lingerMs` lets queued messages go out first. Returns the answers never written. */
  close(lingerMs = 0): JobAnswer[] {
    this.closed = true;
    for (const socket of [this.heartbeat, this.command]) {
      socket.linger = lingerMs;
      socket.close();
    }
    return this.pending.splice(0);
  }

  /** Resolves once every job answer is handed to ZeroMQ, or after `timeoutMs`. */
  async flush(timeoutMs: number): Promise<void> {
    const deadline = this.timers.now() + timeoutMs;
    while ((this.pending.length > 0 || this.writing) && !this.closed && this.timers.now() < deadline) {
      await delay(this.timers, FLUSH_POLL_MS);
    }
  }

  private frames(body: object): [string, string] {
    return signedFrames(this.sender, this.config.sessionKey, body);
  }

  /** One writer per socket, so the command channel's sequences go out in the order they were taken. */
  private async drain(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    for (let next = this.pending[0]; next !== undefined && !this.closed; next = this.pending[0]) {
      try {
        // The envelope is made per attempt: a retried answer gets a fresh sequence and timestamp.
        await this.command.send(this.frames(next));
        this.pending.shift();
      } catch {
        await delay(this.timers, RETRY_MS);
      }
    }
    this.writing = false;
  }

  private async receive(socket: Dealer, channel: Channel, replay: Replays): Promise<void> {
    const { org, node, now } = this.sender;
    const opts: DecodeOptions & { schema: 'server' } = {
      expectIdentity: false,
      maxBodySize: this.config.maxBodySize,
      maxSkewSeconds: this.config.maxMessageSkew,
      now: 0,
      keyFor: (o, n) => (o === org && n === node ? this.config.sessionKey : undefined),
      replay,
      schema: 'server',
    };
    await readServerMessages(socket, channel, opts, now, this.handlers);
  }
}

/**
 * Reads a node's channel until it is closed: each message checked and handed on, a message of the other
 * channel's type dropped (each channel keeps its own replay guard, so a moved message is a replay).
 */
export function readServerMessages(
  socket: Dealer,
  channel: Channel,
  opts: DecodeOptions & { schema: 'server' },
  now: () => number,
  handlers: ConnectionHandlers,
): Promise<void> {
  return readUntilClosed(socket, {
    take: (frames) => {
      opts.now = now();
      const d = decodeFrames(frames, opts);
      if (!d.ok) handlers.drop(d.reason, `${channel} channel: ${d.detail}`);
      else if ((d.message.type === 'heartbeat') !== (channel === 'heartbeat'))
        handlers.drop('bad_body', `${d.message.type} on the ${channel} channel`);
      else handlers.message(channel, d.message);
      return undefined;
    },
    receiveFailed: (e, inARow) => {
      if (worthReporting(inARow))
        handlers.error(`${channel} channel: receive failed (${inARow} in a row), reading again: ${messageOf(e)}`);
    },
    takeFailed: (e) => handlers.error(`${channel} channel: a message could not be handled: ${messageOf(e)}`),
  });
}
