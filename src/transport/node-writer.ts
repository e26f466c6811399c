// What the push-jobs transport writes to nodes: job messages and server heartbeats, each signed with the node's
// session key and numbered in this process's sequence; messages for a node not reachable yet, kept until it is
// (unsent.ts); and the `node_in_use` refusals told to a client process that does not hold its node. The node's
// follower is told each job message written to it and each that reached no connection of it: its machine keeps the
// commits the node has not answered (actors/push/awaited-commits.ts), and asks for one lost to be written again.
import type { ServerConfig } from '../config/server-config.js';
import { signedText } from '../protocol/frames.js';
import { enveloped, envelopeFor } from '../protocol/messages.js';
import type { OutboundMessage } from '../protocol/node-messages.js';
import type { PushChannels } from './channels.js';
import type { Peer, PeerTable } from './peers.js';
import type { SessionKeys } from './session-keys.js';
import { nodeKey, type Outgoing, type Unsent } from './unsent.js';
import type { Refusal } from './verify.js';

export type WriterConfig = Pick<ServerConfig, 'server_name' | 'heartbeat_interval'>;

export interface WriterPorts {
  channels: PushChannels;
  sessions: SessionKeys;
  peers: PeerTable;
  unsent: Unsent;
  incarnationId: string;
  now(): number;
}

export class NodeWriter {
  private sequence = 0;
  /** When each refused node was last told so. */
  private readonly refusedAt = new Map<string, number>();

  constructor(
    private readonly config: WriterConfig,
    private readonly ports: WriterPorts,
  ) {}

  /**
   * The next sequence of this process's messages: its clock in microseconds, kept rising. A node hears the members
   * of a cluster in turn and keeps each one's last sequence (GatewayReplayGuard); on one clock, sequences are also
   * comparable between members, and a member restarted starts above what it sent before.
   */
  private nextSequence(): number {
    this.sequence = Math.max(this.sequence + 1, this.ports.now() * 1000);
    return this.sequence;
  }

  /** Writes a job message to a node connected here, or keeps it until the node is heard. */
  send(org: string, node: string, message: OutboundMessage, voteBy?: number): void {
    if (!this.ports.channels.bound) return;
    const peer = this.ports.peers.get(org, node);
    const out = { message, at: this.ports.now(), voteBy };
    if (peer?.identity) this.write(org, node, peer, peer.identity, out);
    else this.ports.unsent.keep(org, node, out);
  }

  /** The node is heard from `identity` for the first time: what waited for it is written now. */
  reached(org: string, node: string, peer: Peer, identity: Buffer, at: number): void {
    for (const out of this.ports.unsent.take(org, node, at)) this.write(org, node, peer, identity, out);
  }

  /** `peer`: the node's, whose follower is told what was written; `identity`: where to write. */
  private write(org: string, node: string, peer: Peer, identity: Buffer, out: Outgoing): void {
    const key = this.ports.sessions.keyFor(org, node);
    const channel = this.ports.channels.commandOut;
    if (!key || !channel) return; // no session: the job's timers deal with silence
    const now = this.ports.now();
    const envelope = envelopeFor(org, node, this.ports.incarnationId, this.nextSequence(), now);
    channel.push([identity, ...signedText(enveloped(out.message, envelope), key)], () =>
      this.unroutable(org, node, identity, out),
    );
    peer.follower.tell({ type: 'written', at: now, message: out.message, voteBy: out.voteBy });
  }

  /**
   * No command connection has the routing id the node was heard from: the message waits again, and the node's
   * next message (a heartbeat, most likely) writes it, once its command connection may be up.
   */
  private unroutable(org: string, node: string, identity: Buffer, out: Outgoing): void {
    const peer = this.ports.peers.get(org, node);
    if (peer?.identity?.equals(identity)) peer.identity = undefined;
    this.ports.unsent.keep(org, node, out);
    peer?.follower.tell({ type: 'unroutable', at: this.ports.now(), message: out.message });
  }

  /** The server's heartbeat to one node. */
  beat(org: string, node: string, identity: Buffer, now: number): void {
    const key = this.ports.sessions.keyFor(org, node);
    const channel = this.ports.channels.heartbeatOut;
    if (!key || !channel) return;
    const body = {
      type: 'heartbeat',
      ...envelopeFor(org, node, this.ports.incarnationId, this.nextSequence(), now),
      server: this.config.server_name,
      interval_ms: this.config.heartbeat_interval,
    };
    channel.push([identity, ...signedText(body, key)]);
  }

  /**
   * Tells a refused client process, once per heartbeat interval, that another one holds its node: signed with
   * the node's key, so only a holder of that key learns it, and sent to the refused process's own routing id.
   */
  refuse(r: Refusal, now: number): void {
    const key = this.ports.sessions.keyFor(r.org, r.node);
    // On the command channel whichever channel it came on: the heartbeat channel carries heartbeats only.
    const channel = this.ports.channels.commandOut;
    const told = nodeKey(r.org, r.node);
    if (!key || !channel || !r.identity) return;
    if (now - (this.refusedAt.get(told) ?? -Infinity) < this.config.heartbeat_interval) return;
    this.refusedAt.set(told, now);
    const body = {
      type: 'node_in_use',
      ...envelopeFor(r.org, r.node, this.ports.incarnationId, this.nextSequence(), now),
      retry_after_ms: r.retryAfterMs,
    };
    channel.push([r.identity, ...signedText(body, key)]);
  }

  /** A round of server heartbeats starts: what waited too long for its node is let go, and so are old refusals. */
  roundStarted(now: number): void {
    // Messages for nodes that never came back are let go once stale.
    this.ports.unsent.expire(now);
    // A refusal older than an interval no longer holds back the next one.
    for (const [key, at] of this.refusedAt) if (now - at >= this.config.heartbeat_interval) this.refusedAt.delete(key);
  }

  /** The node went down: nothing waits for it any more (its machine, which marked it down, awaits no vote of it). */
  nodeDown(org: string, node: string): void {
    this.ports.unsent.drop(org, node);
  }

  forgetOrg(org: string): void {
    const prefix = nodeKey(org, '');
    this.ports.unsent.dropOrg(org);
    for (const key of this.refusedAt.keys()) if (key.startsWith(prefix)) this.refusedAt.delete(key);
  }
}
