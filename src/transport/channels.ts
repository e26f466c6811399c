// The push-jobs channels (spec 6): two ROUTER sockets nodes connect to, heartbeats on one and job messages on the
// other, each with its outbox; and the read loop that shares the event loop between reading both and writing the
// fleet's fan-outs. What is read leaves here as raw frames: checking them is verify.ts's, acting on them the hub's.
import { Router } from 'zeromq';
import type { ServerConfig } from '../config/server-config.js';
import type { Logger } from '../lib/logger.js';
import { codeOf, messageOf } from '../lib/thrown.js';
import { keepaliveOptions } from '../protocol/keepalive.js';
import type { PushDescription } from '../protocol/node-messages.js';
import { readUntilClosed, worthReporting } from '../protocol/read-loop.js';
import { receiveIntoOwnMemory } from '../protocol/zmq-context.js';
import { bindRetrying } from './bind-retrying.js';
import type { CurveKeys } from './curve-keys.js';
import type { HeartbeatLag } from './heartbeat-lag.js';
import { Outbox } from './outbox.js';
import type { PeerGate } from './peer-gate.js';

export type Channel = 'heartbeat' | 'command';

export type ChannelConfig = Pick<
  ServerConfig,
  | 'command_port'
  | 'server_heartbeat_port'
  | 'queue_listen_address'
  | 'idle_timeout'
  | 'server_name'
  | 'max_message_skew'
  | 'max_body_size'
>;

/** Connections each channel's listening socket queues before it accepts them (see bind). */
export const LISTEN_BACKLOG = 4096;
/**
 * Heartbeats handled in one turn of the event loop at most (about a millisecond of work): then the loop turns, and
 * job answers (the command channel is read in its I/O phase, between two such batches), fan-outs and timers (the
 * sweeps that decide `down` among them) go before more heartbeats.
 */
const HEARTBEATS_PER_TURN = 64;

interface Sockets {
  heartbeat: Router;
  command: Router;
  heartbeatOut: Outbox;
  commandOut: Outbox;
}

export class PushChannels {
  private sockets: Sockets | undefined;
  private readonly ports = { heartbeat: 0, command: 0 };
  private curvePublicKey: string | null = null;

  constructor(
    private readonly config: ChannelConfig,
    /** This process's push-jobs incarnation, which its nodes see change when it restarts. */
    private readonly incarnationId: string,
    private readonly gate: PeerGate,
    private readonly lag: HeartbeatLag,
    private readonly log: Logger,
  ) {}

  /** Binds both channels (port 0 picks a free port), as Curve servers when `curve` is given. */
  async bind(curve: CurveKeys | null): Promise<void> {
    this.curvePublicKey = curve?.publicKey ?? null;
    const options = {
      handover: true,
      linger: 0,
      // A Router never waits to send (past a peer's high-water mark its message is dropped, or refused when
      // mandatory), so a send need not first ask the socket whether it can: with sendTimeout 0, zeromq.js skips
      // that check, a system call per message (about 2.5 µs of a send's 20 in a bare loop).
      sendTimeout: 0,
      // TCP keepalives close the connection of a peer whose host vanished without a word (a half-open TCP
      // connection) within idle_timeout, so a vanished fleet does not hold file descriptors for ever. Not ZMTP
      // heartbeats: libzmq 4.3.5 aborts the whole process (assertion in stream_engine_base.cpp) when a
      // connection's heartbeat timer fires after the connection failed while its input was held back, which a
      // node reconnecting under its routing id (handover) while the server is busy brings about.
      ...keepaliveOptions(this.config.idle_timeout),
      // A fleet connecting together (a first start, a restart, a failover) must not overflow the accept queue,
      // 100 connections by default: past it the kernel drops connections or answers them with SYN cookies, and
      // each node waits out TCP's retransmissions (1 s, 3 s, 7 s...). The kernel caps this at net.core.somaxconn.
      backlog: LISTEN_BACKLOG,
      ...(curve ? { curveServer: true, curveSecretKey: curve.secretKey } : {}),
      ...this.gate.routerOptions(curve !== null),
    };
    if (curve) await this.gate.admitNamedKeysOnly();
    if (!receiveIntoOwnMemory())
      this.log.info('libzmq lacks ZMQ_ZERO_COPY_RECV: each message read holds its read buffer until it is collected');
    const heartbeat = new Router(options);
    // Mandatory: a command for a routing id with no connection on this channel fails instead of vanishing. A
    // node is often heard on the heartbeat channel before its command connection is up (after a restart, its
    // sockets reconnect one by one), and a job's commit written then was lost. A peer past its high-water mark
    // then fails at once (EAGAIN: the message is lost, as the protocol allows) rather than holding the writer.
    const command = new Router({ ...options, mandatory: true });
    this.gate.watch(heartbeat);
    this.gate.watch(command);
    const report = (e: unknown) => this.log.error('send failed', { error: messageOf(e) });
    this.sockets = {
      heartbeat,
      command,
      heartbeatOut: new Outbox(heartbeat, report),
      commandOut: new Outbox(command, (e, undelivered) => {
        if (codeOf(e) === 'EHOSTUNREACH') undelivered?.();
        else if (codeOf(e) !== 'EAGAIN') report(e);
      }),
    };
    const at = (port: number) => `${this.config.queue_listen_address}:${port === 0 ? '*' : port}`;
    await bindRetrying(heartbeat, at(this.config.server_heartbeat_port));
    await bindRetrying(command, at(this.config.command_port));
    this.ports.heartbeat = portOf(heartbeat.lastEndpoint);
    this.ports.command = portOf(command.lastEndpoint);
  }

  /** Where nodes connect and how they check this server (the config endpoint's body). */
  describe(): PushDescription {
    return {
      heartbeat_addr: `tcp://${this.config.server_name}:${this.ports.heartbeat}`,
      command_addr: `tcp://${this.config.server_name}:${this.ports.command}`,
      curve_public_key: this.curvePublicKey,
      incarnation_id: this.incarnationId,
      max_message_skew: this.config.max_message_skew,
      max_body_size: this.config.max_body_size,
      server_name: this.config.server_name,
    };
  }

  get bound(): boolean {
    return this.sockets !== undefined;
  }

  /** The heartbeat channel's outbox, once bound. */
  get heartbeatOut(): Outbox | undefined {
    return this.sockets?.heartbeatOut;
  }

  /** The command channel's outbox, once bound: job messages and refusals. */
  get commandOut(): Outbox | undefined {
    return this.sockets?.commandOut;
  }

  /** Reads both channels until they close, handing each message's frames to `take` as it is read. */
  read(take: (channel: Channel, frames: Buffer[]) => void): void {
    if (!this.sockets) throw new Error('the push-jobs channels must be bound before they are read');
    void this.receive(this.sockets.heartbeat, 'heartbeat', take);
    void this.receive(this.sockets.command, 'command', take);
  }

  close(): void {
    this.sockets?.heartbeat.close();
    this.sockets?.command.close();
  }

  private async receive(
    socket: Router,
    channel: Channel,
    handle: (channel: Channel, frames: Buffer[]) => void,
  ): Promise<void> {
    // A fan-out queued for the nodes (a job's commit or run) is written before more is read: the fleet gets it
    // at once, instead of each send waiting behind the reading of an answer. Then as many messages are read as
    // it held before another fan-out is waited for, so that reading and writing share the time.
    let credit = 0;
    // Heartbeats are read a bounded share of each turn. At each turn's end the reader looks whether more wait (only
    // it may ask its socket: asked while a receive waits, zeromq can miss the socket's next signal and never wake).
    const yieldBefore = (taken: number): boolean => {
      if (taken < HEARTBEATS_PER_TURN) {
        // Idle only when nothing waits: zeromq lets the event loop turn every 512 receives, and a sweep that took
        // such a turn for an empty channel would forget how old the backlog is and mark its nodes down.
        this.lag.beforeReceive(socket.readable);
        return false;
      }
      this.lag.paused(socket.readable);
      return true;
    };
    await readUntilClosed(socket, {
      ...(channel === 'heartbeat' ? { yieldBefore } : {}),
      take: (frames) => {
        if (channel === 'heartbeat') this.lag.took();
        if (credit > 0) credit -= 1;
        else {
          const fanOut = this.sockets?.commandOut.fanOut();
          if (fanOut !== undefined) {
            credit = fanOut.size;
            return fanOut.written.then(() => handle(channel, frames));
          }
        }
        handle(channel, frames);
        return undefined;
      },
      receiveFailed: (e, inARow) => {
        if (worthReporting(inARow))
          this.log.warn('receive failed; reading again', { channel, error: messageOf(e), inARow });
      },
      takeFailed: (e) => this.log.error('a message could not be handled', { channel, error: messageOf(e) }),
    });
  }
}

function portOf(endpoint: string | null): number {
  const port = Number(endpoint?.slice(endpoint.lastIndexOf(':') + 1));
  if (!Number.isInteger(port) || port <= 0) throw new Error(`cannot tell the port of ${String(endpoint)}`);
  return port;
}
