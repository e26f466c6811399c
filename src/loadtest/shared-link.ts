// Several simulated nodes over one pair of ZeroMQ channels (--nodes-per-connection). Each message is still
// the node's own: its envelope, sequence and incarnation, signed with its session key; the server routes by
// the sender in the body and answers to the routing id the message came from, so one connection can carry
// many nodes. A process has room for about 10,000 sockets, so a fleet past a few thousand nodes per worker
// shares connections, and sharing also takes the per-socket cost off the load generator's CPU.
import { Dealer } from 'zeromq';
import {
  dealerOptions,
  readServerMessages,
  signedFrames,
  type CurveKeys,
  type HeartbeatBody,
  type Sender,
} from '../client/connection.js';
import type { JobAnswer } from '../client/job-runner.js';
import type { PushConfig } from '../client/push-config.js';
import { delay, type Timers } from '../lib/timers.js';
import type { ServerMessage } from '../protocol/messages.js';
import type { DecodeOptions, DropReason } from '../protocol/receive.js';
import { GatewayReplayGuard } from '../protocol/replay.js';
import { connectSocket } from '../protocol/socket-connect.js';
import { testerTimers } from './clock.js';

/** What a simulated node sends through, whether its connection is its own or shared. */
export interface NodeLink {
  /** False when this node's previous heartbeat has not been written yet (this one is skipped). */
  sendHeartbeat(body: HeartbeatBody): boolean;
  sendCommand(answer: JobAnswer): void;
  close(): void;
}

export interface LinkMember {
  readonly sender: Sender;
  readonly sessionKey: Buffer;
  receive(m: ServerMessage): void;
}

export interface LinkHandlers {
  drop(reason: DropReason | 'send_skipped', detail: string): void;
  error(detail: string): void;
}

const RETRY_MS = 100;
/**
 * How long the first answer queued on a link waits for others. A message written alone wakes libzmq's I/O thread
 * for itself, about 60 µs of the process's CPU against 3 µs for each message of a burst, and a job's commit or run
 * reaches a link's nodes over a millisecond or more: gathered, their answers leave in bursts, and the tester takes
 * less of the CPU it shares with the server it measures.
 */
const GATHER_MS = 1;

export class SharedLink {
  private readonly heartbeat: Dealer;
  private readonly command: Dealer;
  private readonly members = new Map<string, LinkMember>();
  /** Session keys of every node that joined, gone ones too: a message still on its way to a node that went
   * away is verified and then let fall, as its own closed socket would have, not counted as a stranger's. */
  private readonly keys = new Map<string, Buffer>();
  /** Heartbeats waiting to be written, in order; a node has at most one here. */
  private beats: Array<{ member: LinkMember; body: HeartbeatBody }> = [];
  private readonly beating = new Set<LinkMember>();
  private answers: Array<{ member: LinkMember; answer: JobAnswer }> = [];
  private writingBeats = false;
  private writingAnswers = false;
  private answersDue = false;
  private closed = false;
  /** Nodes the worker placed on this link (they join when they connect, in waves); it fills up to its share. */
  assigned = 0;

  constructor(
    private readonly org: string,
    config: PushConfig,
    curve: CurveKeys | null,
    routingId: string,
    private readonly handlers: LinkHandlers,
    private readonly timers: Timers = testerTimers,
  ) {
    // As the client's own connection, with queues as deep as the nodes it carries.
    const options = dealerOptions(config, routingId, curve);
    this.heartbeat = new Dealer({ ...options, sendHighWaterMark: 10_000 });
    this.command = new Dealer({ ...options, sendHighWaterMark: 10_000 });
    connectSocket(this.heartbeat, config.heartbeatAddr);
    connectSocket(this.command, config.commandAddr);
    const decode = {
      expectIdentity: false,
      maxBodySize: config.maxBodySize,
      maxSkewSeconds: config.maxMessageSkew,
      keyFor: (o: string, n: string) => (o === this.org ? this.keys.get(n) : undefined),
    };
    void this.receive(this.heartbeat, 'heartbeat', {
      ...decode,
      now: 0,
      replay: new GatewayReplayGuard(),
      schema: 'server',
    });
    void this.receive(this.command, 'command', {
      ...decode,
      now: 0,
      replay: new GatewayReplayGuard(),
      schema: 'server',
    });
  }

  /** Adds a node; its messages go out and come in over this link until its handle is closed. */
  join(member: LinkMember): NodeLink {
    this.members.set(member.sender.node, member);
    this.keys.set(member.sender.node, member.sessionKey);
    return {
      sendHeartbeat: (body) => this.queueBeat(member, body),
      sendCommand: (answer) => {
        if (this.members.get(member.sender.node) !== member) return;
        this.answers.push({ member, answer });
        this.gatherAnswers();
      },
      close: () => this.leave(member),
    };
  }

  close(): void {
    this.closed = true;
    this.heartbeat.close();
    this.command.close();
  }

  /** Like the node's process ending: what it had not written yet is lost with it. */
  private leave(member: LinkMember): void {
    if (this.members.get(member.sender.node) !== member) return;
    this.members.delete(member.sender.node);
    this.beats = this.beats.filter((b) => b.member !== member);
    this.beating.delete(member);
    this.answers = this.answers.filter((a) => a.member !== member);
  }

  private queueBeat(member: LinkMember, body: HeartbeatBody): boolean {
    if (this.closed || this.members.get(member.sender.node) !== member || this.beating.has(member)) return false;
    this.beating.add(member);
    this.beats.push({ member, body });
    void this.writeBeats();
    return true;
  }

  private frames(member: LinkMember, body: object): [string, string] {
    return signedFrames(member.sender, member.sessionKey, body);
  }

  /** One writer per socket (zeromq takes one send at a time); a full queue loses the heartbeat, as the client's. */
  private async writeBeats(): Promise<void> {
    if (this.writingBeats) return;
    this.writingBeats = true;
    while (this.beats.length > 0 && !this.closed) {
      const batch = this.beats;
      this.beats = [];
      for (const { member, body } of batch) {
        if (!this.beating.has(member)) continue; // it left meanwhile
        await this.heartbeat
          .send(this.frames(member, body))
          .catch(() => this.handlers.drop('send_skipped', 'heartbeat channel: the socket took no more'));
        this.beating.delete(member);
      }
    }
    this.writingBeats = false;
  }

  /** Writes the queued answers GATHER_MS from now, unless a write is due or under way (it takes them too). */
  private gatherAnswers(): void {
    if (this.answersDue || this.writingAnswers) return;
    this.answersDue = true;
    this.timers.after(GATHER_MS, () => {
      this.answersDue = false;
      void this.writeAnswers();
    });
  }

  /** Job answers in order; one the socket cannot take now is tried again, with a fresh envelope. */
  private async writeAnswers(): Promise<void> {
    if (this.writingAnswers) return;
    this.writingAnswers = true;
    for (let next = this.answers[0]; next !== undefined && !this.closed; next = this.answers[0]) {
      try {
        await this.command.send(this.frames(next.member, next.answer));
        if (this.answers[0] === next) this.answers.shift();
      } catch {
        await delay(this.timers, RETRY_MS);
      }
    }
    this.writingAnswers = false;
  }

  private receive(socket: Dealer, channel: 'heartbeat' | 'command', opts: DecodeOptions & { schema: 'server' }) {
    return readServerMessages(socket, channel, opts, Date.now, {
      message: (_channel, m) => this.members.get(m.node)?.receive(m),
      drop: (reason, detail) => this.handlers.drop(reason, detail),
      error: (detail) => {
        if (!this.closed) this.handlers.error(detail);
      },
    });
  }
}
