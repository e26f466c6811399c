// The push-jobs transport (spec 6, 8): two ROUTER sockets that clients connect to, heartbeats both ways on
// one and job messages on the other. Every message is verified here, then handed to its node actor in one
// hop; outbound messages are signed with the node's session key and written in order.
import { randomUUID } from 'node:crypto';
import { Router } from 'zeromq';
import type { InfraSystem } from '../../actors/system.js';
import type { NodeActor } from '../../actors/push/node.js';
import {
  RECONNECT_GRACE_MAX_MS,
  type NodeAnswerMessage,
  type OutboundMessage,
  type PushDescription,
  type PushTransport,
  type PushSettings,
  type SessionGrant,
} from '../../actors/push/ports.js';
import type { PushLag, VotesRecovered } from '../api/status.js';
import type { ServerConfig } from '../config/server-config.js';
import type { Logger } from '../lib/logger.js';
import { codeOf, messageOf } from '../lib/thrown.js';
import { signedText } from '../protocol/frames.js';
import { enveloped, envelopeFor, type ClientHeartbeat, type ClientMessage } from '../protocol/messages.js';
import {
  decodeFrames,
  DropCounter,
  IncarnationOwners,
  ReplayGuard,
  type DecodeOptions,
  type Dropped,
} from '../protocol/receive.js';
import type { Store } from '../store/store.js';
import { loadCurveKeys, saveCurveKeys, type CurveKeys } from './curve-keys.js';
import type { ZmqConnections } from './connection-watch.js';
import { LagMeter } from './lag-meter.js';
import { Outbox } from './outbox.js';
import { readUntilClosed, worthReporting } from '../protocol/read-loop.js';
import { receiveIntoOwnMemory } from '../protocol/zmq-context.js';
import { SessionKeys } from './session-keys.js';
import { PeerGate } from './peer-gate.js';

type HubConfig = Pick<
  ServerConfig,
  | 'command_port'
  | 'server_heartbeat_port'
  | 'queue_listen_address'
  | 'server_name'
  | 'heartbeat_interval'
  | 'offline_threshold'
  | 'online_threshold'
  | 'voting_timeout'
  | 'max_body_size'
  | 'max_message_skew'
  | 'curve_encryption'
  | 'session_key_lifetime'
  | 'idle_timeout'
  | 'job_retention_days'
  | 'redis_url'
  | 'lease_ttl'
  | 'handshake_timeout'
>;

type Channel = 'heartbeat' | 'command';

/** zeromq releases a closed socket's port in its I/O thread, a moment after close(): a server restarted in
 * the same process (or quickly after its predecessor) retries a taken port this long before giving up. */
const BIND_RETRY_MS = 2000;
/** Messages kept for a node not heard yet; a job sends a node at most commit, run and abort. */
const UNSENT_PER_NODE = 4;
/** Server heartbeats signed per turn of the event loop. */
const BEAT_SLICE = 500;
/**
 * The server's heartbeats are spread over the interval in slots this long, each node in the same slot every
 * round: 10,000 nodes at once every 10 s would stall a job's fan-out for as long as they take to sign.
 */
const BEAT_SLOT_MS = 100;
const BIND_RETRY_STEP_MS = 20;
/** The period of the timer that tells how late the event loop runs (see LagMeter). */
const LAG_PROBE_MS = 50;
/**
 * Heartbeats handled in one turn of the event loop at most (about a millisecond of work): then the loop turns, and
 * job answers (the command channel is read in its I/O phase, between two such batches), fan-outs and timers (the
 * sweeps that decide `down` among them) go before more heartbeats.
 */
const HEARTBEATS_PER_TURN = 64;

/** A message on its way to a node: `at`, when its job sent it; `voteBy`, a commit's voting deadline. */
interface Outgoing {
  message: OutboundMessage;
  at: number;
  voteBy: number | undefined;
}

interface Sockets {
  heartbeat: Router;
  command: Router;
  heartbeatOut: Outbox;
  commandOut: Outbox;
}

/** What the hub knows of a connected node: where to write to it, and its actor. */
interface Peer {
  /**
   * The routing id of the node's client process. Its two dealers share one id, so whichever channel spoke
   * last names both: a restarted client that has only heartbeated so far still gets its rehab abort.
   */
  identity: Buffer | undefined;
  /**
   * When its last heartbeat arrived. A node is down once silent past the offline window by its heartbeats alone
   * (its job answers do not count), so the hub counts it connected and heartbeats it by the same clock: a node
   * GET shows down is not also counted connected because it answered an abort after its last heartbeat.
   */
  lastBeat: number;
  actor: NodeActor;
  /**
   * The commits written to the node, by job, until the node answers one, is sent on for its job, or its vote is
   * over; undefined when none waits (most nodes, most of the time).
   */
  awaiting: Map<string, AwaitedVote> | undefined;
}

/** A commit written to a node: when, and its job's voting deadline. */
interface AwaitedVote {
  out: Outgoing;
  writtenAt: number;
  voteBy: number;
}

export class PushHub implements PushTransport {
  readonly settings: PushSettings;
  readonly incarnationId = randomUUID();
  readonly drops: DropCounter;
  /** Messages verified and handed to their node actor, for GET /_status and load figures. */
  private accepted = 0;
  private heartbeats = 0;
  /** Votes recovered from a lost commit (written again) or a lost ack (read from the node's heartbeat). */
  private readonly votesRecovered: VotesRecovered = { commit_resent: 0, ack_from_heartbeat: 0 };
  private readonly sessions: SessionKeys;
  /** Bounds frames and handshakes, admits only Curve keys nodes named, and counts what it refused. */
  private readonly gate: PeerGate;
  private readonly peers = new Map<string, Map<string, Peer>>();
  private curve: CurveKeys | null = null;
  private sockets: Sockets | undefined;
  private readonly ports = { heartbeat: 0, command: 0 };
  /** Which client process holds each node, for both channels (see IncarnationOwners). */
  private readonly owners: IncarnationOwners;
  /** Messages to nodes not reachable yet, by `org\0node`, written when they are (see keepUnsent). */
  private readonly unsent = new Map<string, Outgoing[]>();
  /** When the channels began reading: no node can be heard before. */
  private readingSince = Infinity;
  /** When each refused node was last told so. */
  private readonly refusedAt = new Map<string, number>();
  private sequence = 0;
  private system: InfraSystem | undefined;
  private ticker: NodeJS.Timeout | undefined;
  /** How far behind the heartbeat channel is read; made when reading starts. */
  private lagMeter: LagMeter | undefined;
  private prober: NodeJS.Timeout | undefined;
  /** Nodes kept `up` past the offline window because this server lagged (one per silence). */
  private downsDeferred = 0;
  /**
   * The heartbeat reader waits for a message. Seen from a timer, that means the channel was read empty: a receive
   * that finds a message waiting resolves before any timer can run.
   */
  private heartbeatReaderIdle = false;

  constructor(
    private readonly config: HubConfig,
    readonly store: Store,
    private readonly log: Logger,
    readonly now: () => number = Date.now,
  ) {
    this.settings = {
      voting_timeout: config.voting_timeout,
      heartbeat_interval: config.heartbeat_interval,
      offline_threshold: config.offline_threshold,
      online_threshold: config.online_threshold,
      job_retention_days: config.job_retention_days,
      // A cluster's owner dies with its lease still running, and the nodes' config fetches back off meanwhile.
      takeover_grace_ms: config.redis_url === undefined ? 0 : 2 * config.lease_ttl * 1000,
    };
    this.gate = new PeerGate(config, now, `infra-push-${this.incarnationId}`);
    this.sessions = new SessionKeys(store, config.session_key_lifetime, now, this.gate.admitted);
    this.owners = new IncarnationOwners(config.offline_threshold * config.heartbeat_interval);
    this.drops = new DropCounter({ log: (line, reason) => log.warn(line, { reason }) });
  }

  /** Loads the Curve key pair and binds both channels (port 0 picks a free port). */
  async bind(): Promise<void> {
    this.curve = this.config.curve_encryption
      ? await loadCurveKeys(this.store).catch((e: unknown) => {
          throw new Error(`the CurveZMQ key pair could not be read or saved: ${messageOf(e)}`, { cause: e });
        })
      : null;
    const options = {
      handover: true,
      linger: 0,
      // A Router never waits to send (past a peer's high-water mark its message is dropped, or refused when
      // mandatory), so a send need not first ask the socket whether it can: with sendTimeout 0, zeromq.js skips
      // that check, a system call per message (about 2.5 µs of a send's 20 in a bare loop).
      sendTimeout: 0,
      // ZMTP pings close the connection of a peer gone without a word (a half-open TCP connection) after
      // idle_timeout, so a vanished fleet does not hold file descriptors for ever.
      heartbeatInterval: (this.config.idle_timeout * 1000) / 2,
      heartbeatTimeout: this.config.idle_timeout * 1000,
      ...(this.curve ? { curveServer: true, curveSecretKey: this.curve.secretKey } : {}),
      ...this.gate.routerOptions(this.curve !== null),
    };
    if (this.curve) await this.gate.admitNamedKeysOnly();
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

  /** Starts taking messages for the actor tree and sending server heartbeats. */
  async attach(system: InfraSystem): Promise<void> {
    this.system = system;
    if (!this.sockets) throw new Error('the push-jobs hub must be bound before it is attached');
    // The organizations adopted so far loaded their session keys (openOrg) as they were adopted.
    system.resumePush();
    this.readingSince = this.now();
    const meter = new LagMeter(
      { probeMs: LAG_PROBE_MS, holdMs: this.config.offline_threshold * this.config.heartbeat_interval },
      this.readingSince,
    );
    this.lagMeter = meter;
    this.prober = setInterval(() => {
      const now = this.now();
      meter.probe(now);
      meter.channel(now, !this.heartbeatReaderIdle);
    }, LAG_PROBE_MS);
    void this.receive(this.sockets.heartbeat, 'heartbeat');
    void this.receive(this.sockets.command, 'command');
    const slots = Math.max(1, Math.round(this.config.heartbeat_interval / BEAT_SLOT_MS));
    this.ticker = setInterval(() => this.beat(slots), this.config.heartbeat_interval / slots);
  }

  send(org: string, node: string, message: OutboundMessage, voteBy?: number): void {
    if (!this.sockets) return;
    const peer = this.peers.get(org)?.get(node);
    const out = { message, at: this.now(), voteBy };
    if (peer?.identity) this.write(org, node, peer, peer.identity, out);
    else this.keepUnsent(org, node, out);
  }

  /**
   * For a node not heard since this server started (it restarted, or the node is reconnecting), or whose command
   * connection was not up: written when the node is next heard, so that a commit of a job resumed after a restart
   * arrives. It is signed then, with the key of that moment: at a restart jobs resume before sessions are loaded.
   * It waits while its node may still be up: until the node goes down (nodeDown), at most as long as a node
   * restored after a restart is given to reconnect, counted from when it was first sent or, if later, from when
   * the channels began reading. A fleet reconnecting to a restarted server is heard over seconds, and a node
   * whose command connection comes up late keeps heartbeating meanwhile.
   */
  private keepUnsent(org: string, node: string, out: Outgoing): void {
    const unsentKey = nodeKey(org, node);
    const { message } = out;
    // A message sent again (a rehab abort, once an interval) replaces its earlier copy instead of crowding out
    // the others.
    const same = (w: Outgoing) => w.message.type === message.type && w.message.job_id === message.job_id;
    const waiting = (this.unsent.get(unsentKey) ?? []).filter((w) => !same(w));
    waiting.push(out);
    if (waiting.length > UNSENT_PER_NODE) waiting.shift();
    this.unsent.set(unsentKey, waiting);
  }

  /** `peer`: the node's, which keeps the commit awaiting an answer; `identity`: where to write. */
  private write(org: string, node: string, peer: Peer, identity: Buffer, out: Outgoing): void {
    const key = this.sessions.keyFor(org, node);
    if (!key || !this.sockets) return; // no session: the job's timers deal with silence
    const now = this.now();
    const { message } = out;
    const envelope = envelopeFor(org, node, this.incarnationId, ++this.sequence, now);
    this.sockets.commandOut.push([identity, ...signedText(enveloped(message, envelope), key)], () =>
      this.unroutable(org, node, identity, out),
    );
    if (message.type === 'commit' && out.voteBy !== undefined)
      (peer.awaiting ??= new Map()).set(message.job_id, { out, writtenAt: now, voteBy: out.voteBy });
    // Anything else for the job ends the wait, and so does a rehab abort: the node's jobs count it gone.
    else if (message.job_id === null) peer.awaiting = undefined;
    else answered(peer, message.job_id);
  }

  /**
   * A node heard but silent on a commit written an offline window ago (`offline_threshold` intervals: heartbeats
   * read later than that would have the node down already) lost the commit or its answer on the way: with a
   * restart, or its channels replaced while the commit was in flight. Its heartbeat says which. Not holding the job,
   * it is sent the commit again; holding it committed, it acked, and the heartbeat, signed like any answer, is
   * taken as that ack.
   */
  private recoverVote(org: string, node: string, peer: Peer, beat: ClientHeartbeat, at: number): void {
    if (!peer.awaiting || !peer.identity) return;
    const window = this.config.offline_threshold * this.config.heartbeat_interval;
    for (const [job, awaited] of peer.awaiting) {
      if (at - awaited.writtenAt < window) continue;
      if (at >= awaited.voteBy) answered(peer, job);
      else if (beat.job_id !== job) {
        this.votesRecovered.commit_resent += 1;
        this.write(org, node, peer, peer.identity, awaited.out);
      } else if (beat.job_state === 'committed') {
        answered(peer, job);
        this.votesRecovered.ack_from_heartbeat += 1;
        peer.actor.tell({ type: 'answer', at, message: { type: 'ack_commit', job_id: job } });
      }
    }
  }

  /**
   * No command connection has the routing id the node was heard from: the message waits again, and the node's
   * next message (a heartbeat, most likely) writes it, once its command connection may be up.
   */
  private unroutable(org: string, node: string, identity: Buffer, out: Outgoing): void {
    const peer = this.peers.get(org)?.get(node);
    if (peer?.identity?.equals(identity)) peer.identity = undefined;
    const job = out.message.job_id;
    if (peer && job !== null && peer.awaiting?.get(job)?.out === out) answered(peer, job);
    this.keepUnsent(org, node, out);
  }

  /** `lifetime` is what remains of the key's life, so the client renews before it runs out. */
  async openSession(org: string, node: string, ccpk?: string): Promise<SessionGrant> {
    const session = await this.sessions.open(org, node, ccpk);
    return { key: session.key, lifetime: Math.floor((session.expiresAt - this.now()) / 1000) };
  }

  describe(): PushDescription {
    return {
      heartbeat_addr: `tcp://${this.config.server_name}:${this.ports.heartbeat}`,
      command_addr: `tcp://${this.config.server_name}:${this.ports.command}`,
      curve_public_key: this.curve?.publicKey ?? null,
      incarnation_id: this.incarnationId,
      max_message_skew: this.config.max_message_skew,
      max_body_size: this.config.max_body_size,
      server_name: this.config.server_name,
    };
  }

  lag(at: number): number {
    return this.lagMeter?.lagAt(at, !this.heartbeatReaderIdle) ?? 0;
  }

  downDeferred(): void {
    this.downsDeferred += 1;
  }

  /** Nodes heartbeating within the offline window (those not down, which the server still heartbeats), drops by
   * reason, and how far behind the heartbeat channel is read, for GET /_status. */
  status(): {
    connected_nodes: number;
    accepted: number;
    heartbeats: number;
    votes_recovered: VotesRecovered;
    lag: PushLag;
    dropped: Record<string, number>;
    connections: ZmqConnections;
  } {
    const since = this.now() - this.config.offline_threshold * this.config.heartbeat_interval;
    let connected = 0;
    for (const nodes of this.peers.values())
      for (const peer of nodes.values()) if (peer.lastBeat >= since) connected += 1;
    return {
      connected_nodes: connected,
      accepted: this.accepted,
      heartbeats: this.heartbeats,
      votes_recovered: { ...this.votesRecovered },
      lag: {
        ...(this.lagMeter?.figures(this.now(), !this.heartbeatReaderIdle) ?? { current_ms: 0, max_ms: 0 }),
        downs_deferred: this.downsDeferred,
      },
      dropped: this.drops.snapshot(),
      connections: this.gate.figures(),
    };
  }

  /** Writes the session keys and the Curve key pair again (the store lost them). */
  async writeBack(): Promise<void> {
    await this.sessions.writeBack();
    if (this.curve) await saveCurveKeys(this.store, this.curve);
  }

  async openOrg(org: string): Promise<void> {
    await this.sessions.load([org]);
  }

  closeOrg(org: string): void {
    this.sessions.forgetOrg(org);
    this.owners.forgetOrg(org);
    const prefix = nodeKey(org, '');
    for (const key of this.unsent.keys()) if (key.startsWith(prefix)) this.unsent.delete(key);
    for (const key of this.refusedAt.keys()) if (key.startsWith(prefix)) this.refusedAt.delete(key);
    this.peers.delete(org);
  }

  /**
   * Tells a refused client process, once per heartbeat interval, that another one holds its node: signed with
   * the node's key, so only a holder of that key learns it, and sent to the refused process's own routing id.
   */
  private refuse(r: NonNullable<Dropped['refused']>, now: number): void {
    const key = this.sessions.keyFor(r.org, r.node);
    // On the command channel whichever channel it came on: the heartbeat channel carries heartbeats only.
    const out = this.sockets?.commandOut;
    const told = nodeKey(r.org, r.node);
    if (!key || !out || !r.identity || now - (this.refusedAt.get(told) ?? -Infinity) < this.config.heartbeat_interval)
      return;
    this.refusedAt.set(told, now);
    const body = {
      type: 'node_in_use',
      ...envelopeFor(r.org, r.node, this.incarnationId, ++this.sequence, now),
      retry_after_ms: r.retryAfterMs,
    };
    out.push([r.identity, ...signedText(body, key)]);
  }

  /** What waited for a node that had not been heard yet, if it is still fresh. */
  private writeUnsent(org: string, node: string, peer: Peer, identity: Buffer, now: number): void {
    const key = nodeKey(org, node);
    const waiting = this.unsent.get(key);
    if (!waiting) return;
    this.unsent.delete(key);
    for (const out of waiting) if (this.stillWaits(out.at, now)) this.write(org, node, peer, identity, out);
  }

  /** Whether a message kept since `at` still waits for its node (see keepUnsent). */
  private stillWaits(at: number, now: number): boolean {
    const lifetime = this.config.offline_threshold * this.config.heartbeat_interval + RECONNECT_GRACE_MAX_MS;
    return now - Math.max(at, this.readingSince) <= lifetime;
  }

  nodeDown(org: string, node: string): void {
    this.unsent.delete(nodeKey(org, node));
    const peer = this.peers.get(org)?.get(node);
    if (peer) peer.awaiting = undefined;
  }

  close(): void {
    if (this.ticker) clearInterval(this.ticker);
    if (this.prober) clearInterval(this.prober);
    this.sockets?.heartbeat.close();
    this.sockets?.command.close();
    this.gate.close();
  }

  private async receive(socket: Router, channel: Channel): Promise<void> {
    const opts: DecodeOptions & { schema: 'client' } = {
      expectIdentity: true,
      maxBodySize: this.config.max_body_size,
      maxSkewSeconds: this.config.max_message_skew,
      now: 0,
      keyFor: (org, node) => this.sessions.keyFor(org, node),
      replay: new ReplayGuard(),
      schema: 'client',
      owners: this.owners,
    };
    // A fan-out queued for the nodes (a job's commit or run) is written before more is read: the fleet gets it
    // at once, instead of each send waiting behind the reading of an answer. Then as many messages are read as
    // it held before another fan-out is waited for, so that reading and writing share the time.
    let credit = 0;
    const handle = (frames: Buffer[]): void => {
      opts.now = this.now();
      const d = decodeFrames(frames, opts);
      if (!d.ok) {
        this.drops.record(d.reason, d.detail);
        if (d.refused) this.refuse(d.refused, opts.now);
      } else this.deliver(channel, d.message, d.identity, opts.now);
    };
    // Heartbeats are read a bounded share of each turn. At each turn's end the reader looks whether more wait (only
    // it may ask its socket: asked while a receive waits, zeromq can miss the socket's next signal and never wake).
    const yieldBefore = (taken: number): boolean => {
      if (taken < HEARTBEATS_PER_TURN) {
        this.heartbeatReaderIdle = true;
        return false;
      }
      this.lagMeter?.channel(this.now(), socket.readable);
      return true;
    };
    await readUntilClosed(socket, {
      ...(channel === 'heartbeat' ? { yieldBefore } : {}),
      take: (frames) => {
        if (channel === 'heartbeat') this.heartbeatReaderIdle = false;
        if (credit > 0) credit -= 1;
        else {
          const fanOut = this.sockets?.commandOut.fanOut();
          if (fanOut !== undefined) {
            credit = fanOut.size;
            return fanOut.written.then(() => handle(frames));
          }
        }
        handle(frames);
        return undefined;
      },
      receiveFailed: (e, inARow) => {
        if (worthReporting(inARow))
          this.log.warn('receive failed; reading again', { channel, error: messageOf(e), inARow });
      },
      takeFailed: (e) => this.log.error('a message could not be handled', { channel, error: messageOf(e) }),
    });
  }

  private deliver(channel: Channel, m: ClientMessage, identity: Buffer | undefined, at: number): void {
    // Each type has its channel: a message moved to the other one is a cross-channel replay (each channel
    // keeps its own replay guard), so it is dropped before it touches anything.
    if ((m.type === 'heartbeat') !== (channel === 'heartbeat')) {
      this.drops.record('bad_body', `${m.org}/${m.node}: ${m.type} on the ${channel} channel`);
      return;
    }
    const peer = this.peer(m.org, m.node);
    if (!peer) {
      this.drops.record('unknown_node', `${m.org}/${m.node}: no such organization`);
      return;
    }
    if (peer.identity === undefined && identity) this.writeUnsent(m.org, m.node, peer, identity, at);
    peer.identity = identity;
    this.accepted += 1;
    if (m.type === 'heartbeat') {
      peer.lastBeat = at;
      this.heartbeats += 1;
      this.recoverVote(m.org, m.node, peer, m, at);
      peer.actor.tell({ type: 'heartbeat', at, incarnation: m.incarnation_id, job: m.job_id });
    } else {
      if (m.job_id !== null) answered(peer, m.job_id);
      peer.actor.tell({ type: 'answer', at, message: answerOf(m) });
    }
  }

  /** The peer of a verified sender, with its node actor spawned on its first message. */
  private peer(org: string, node: string): Peer | undefined {
    let nodes = this.peers.get(org);
    const known = nodes?.get(node);
    if (known) return known;
    const actor = this.system?.nodeActor(org, node);
    if (!actor) return undefined;
    if (!nodes) {
      nodes = new Map();
      this.peers.set(org, nodes);
    }
    const peer: Peer = { identity: undefined, lastBeat: 0, actor, awaiting: undefined };
    nodes.set(node, peer);
    return peer;
  }

  /** The nodes of this heartbeat round, taken at its first slot, and the slot due next. */
  private round: Array<[string, string, Peer]> = [];
  private slot = 0;

  /**
   * One slot of the round: server heartbeats go to every node heard within the offline window (spec 6:
   * heartbeats both ways), a `slots`-th of them at a time. Peers are only added, so a node stays at about the
   * same point of the round and hears the server about once per interval.
   */
  private beat(slots: number): void {
    const out = this.sockets?.heartbeatOut;
    if (!out) return;
    if (this.slot === 0) {
      this.round = [];
      for (const [org, nodes] of this.peers) for (const [node, peer] of nodes) this.round.push([org, node, peer]);
      // Messages for nodes that never came back are let go once stale.
      const now = this.now();
      for (const [key, kept] of this.unsent) if (!this.stillWaits(kept.at(-1)?.at ?? 0, now)) this.unsent.delete(key);
      // A refusal older than an interval no longer holds back the next one.
      for (const [key, at] of this.refusedAt)
        if (now - at >= this.config.heartbeat_interval) this.refusedAt.delete(key);
    }
    const from = Math.floor((this.slot * this.round.length) / slots);
    const to = Math.floor(((this.slot + 1) * this.round.length) / slots);
    this.slot = (this.slot + 1) % slots;
    void this.beatSlices(out, this.round.slice(from, to));
  }

  /**
   * Signs and queues the server heartbeats a slice at a time, yielding between slices: 20,000 signatures in
   * one go would hold the event loop for a tenth of a second and delay the nodes' own heartbeats.
   */
  private async beatSlices(out: Outbox, targets: ReadonlyArray<[string, string, Peer]>): Promise<void> {
    const window = this.config.offline_threshold * this.config.heartbeat_interval;
    for (let i = 0; i < targets.length; i += BEAT_SLICE) {
      if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const now = this.now();
      for (const [org, node, peer] of targets.slice(i, i + BEAT_SLICE)) {
        const key = this.sessions.keyFor(org, node);
        if (!peer.identity || !key || now - peer.lastBeat > window) continue;
        const body = {
          type: 'heartbeat',
          ...envelopeFor(org, node, this.incarnationId, ++this.sequence, now),
          server: this.config.server_name,
          interval_ms: this.config.heartbeat_interval,
        };
        out.push([peer.identity, ...signedText(body, key)]);
      }
    }
  }
}

/** The node's vote in `job` is no longer awaited. */
function answered(peer: Peer, job: string): void {
  peer.awaiting?.delete(job);
  if (peer.awaiting?.size === 0) peer.awaiting = undefined;
}

/** The key of a node in the hub's maps by organization and node. */
function nodeKey(org: string, node: string): string {
  return `${org}\u0000${node}`;
}

function answerOf(m: Exclude<ClientMessage, { type: 'heartbeat' }>): NodeAnswerMessage {
  const answer: NodeAnswerMessage = { type: m.type, job_id: m.job_id };
  if ('exit_status' in m) answer.exit_status = m.exit_status;
  if ('stdout' in m && m.stdout !== undefined) answer.stdout = m.stdout;
  if ('stderr' in m && m.stderr !== undefined) answer.stderr = m.stderr;
  if ('truncated' in m && m.truncated !== undefined) answer.truncated = m.truncated;
  if ('reason' in m) answer.reason = m.reason;
  return answer;
}

async function bindRetrying(socket: Router, address: string): Promise<void> {
  const deadline = Date.now() + BIND_RETRY_MS;
  for (;;) {
    try {
      await socket.bind(address);
      return;
    } catch (e) {
      const taken = codeOf(e) === 'EADDRINUSE';
      if (!taken || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, BIND_RETRY_STEP_MS));
    }
  }
}

function portOf(endpoint: string | null): number {
  const port = Number(endpoint?.slice(endpoint.lastIndexOf(':') + 1));
  if (!Number.isInteger(port) || port <= 0) throw new Error(`cannot tell the port of ${String(endpoint)}`);
  return port;
}
