// The push-jobs transport (spec 6, 8): two ROUTER sockets that clients connect to, heartbeats both ways on
// one and job messages on the other. Every message is verified here, then handed to its node follower in one
// hop; outbound messages are signed with the node's session key and written in order.
import { randomUUID } from 'node:crypto';
import { Router } from 'zeromq';
import type { InfraSystem } from '../../actors/system.js';
import type { NodeFollower } from '../../actors/push/node.js';
import {
  RECONNECT_GRACE_MAX_MS,
  type NodeAnswerMessage,
  type OutboundMessage,
  type PushDescription,
  type PushTransport,
  type PushSettings,
  type SessionGrant,
} from '../../actors/push/ports.js';
import type { PushLag, VotesRecovered } from '../api/status-schema.js';
import type { ServerConfig } from '../config/server-config.js';
import type { Logger } from '../lib/logger.js';
import { codeOf, messageOf } from '../lib/thrown.js';
import { signedText } from '../protocol/frames.js';
import { enveloped, envelopeFor, type ClientHeartbeat, type ClientMessage } from '../protocol/messages.js';
import { decodeFrames, DropCounter, IncarnationOwners, type DecodeOptions, type Dropped } from '../protocol/receive.js';
import { ReplayGuard } from '../protocol/replay.js';
import type { Store } from '../store/store.js';
import { keepaliveOptions } from '../protocol/keepalive.js';
import { bindRetrying } from './bind-retrying.js';
import { loadCurveKeys, saveCurveKeys, type CurveKeys } from './curve-keys.js';
import type { ZmqConnections } from './connection-watch.js';
import { HeartbeatLag } from './heartbeat-lag.js';
import { Outbox } from './outbox.js';
import { readUntilClosed, worthReporting } from '../protocol/read-loop.js';
import { receiveIntoOwnMemory } from '../protocol/zmq-context.js';
import { SessionKeys } from './session-keys.js';
import { nodeKey, Unsent, type Outgoing } from './unsent.js';
import { ServerHeartbeats } from './server-heartbeats.js';
import { recoverVote, type AwaitedVote } from '../../actors/push/vote-recovery.js';
import type { NodeRecord, ServerLag } from '../../actors/push/node-machine.js';
import type { GatewayOrder } from '../cluster/node-link-messages.js';
import { GatewayRoutes, type HubCluster } from './gateway-routes.js';
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
  | 'api_url'
>;

type Channel = 'heartbeat' | 'command';

/** Connections each channel's listening socket queues before it accepts them (see bind). */
export const LISTEN_BACKLOG = 4096;
/**
 * Heartbeats handled in one turn of the event loop at most (about a millisecond of work): then the loop turns, and
 * job answers (the command channel is read in its I/O phase, between two such batches), fan-outs and timers (the
 * sweeps that decide `down` among them) go before more heartbeats.
 */
const HEARTBEATS_PER_TURN = 64;
/** Messages held at most while their nodes' sessions are read (each at most a max_body_size). */
const MAX_HELD_FOR_KEY = 500;

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
  actor: NodeFollower;
  /** The actor is this process's own, as the organization's owner (not a gateway's follower). */
  owned: boolean;
  /**
   * The commits written to the node, by job, until the node answers one, is sent on for its job, or its vote is
   * over; undefined when none waits (most nodes, most of the time).
   */
  awaiting: Map<string, AwaitedCommit> | undefined;
}

/** A commit written to a node and not answered yet (see vote-recovery.ts), with what to write again. */
interface AwaitedCommit extends AwaitedVote {
  out: Outgoing;
}

export class PushHub implements PushTransport {
  readonly settings: PushSettings;
  readonly incarnationId = randomUUID();
  readonly drops: DropCounter;
  /** Messages verified and handed to their node follower, for GET /_status and load figures. */
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
  /** Messages to nodes not reachable yet, written when they are. */
  private readonly unsent: Unsent;
  /** When each refused node was last told so. */
  private readonly refusedAt = new Map<string, number>();
  private sequence = 0;
  private system: InfraSystem | undefined;
  /** Where job messages go in a cluster (undefined on one process: every node is connected here). */
  private routes: GatewayRoutes | undefined;
  private beats: ServerHeartbeats | undefined;
  /** Messages waiting for their node's session to be read (holdForKey). */
  private heldForKey = 0;
  /** How far behind the heartbeat channel is read, measured once reading starts. */
  private readonly heartbeatLag: HeartbeatLag;

  constructor(
    private readonly config: HubConfig,
    readonly store: Store,
    private readonly log: Logger,
    readonly now: () => number = Date.now,
    /** This process's member id in a cluster: the gateway its nodes' sessions name. */
    private readonly me?: string,
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
    this.sessions = new SessionKeys(store, config.session_key_lifetime, now, me, this.gate.admitted);
    this.unsent = new Unsent(config.offline_threshold * config.heartbeat_interval + RECONNECT_GRACE_MAX_MS);
    this.owners = new IncarnationOwners(config.offline_threshold * config.heartbeat_interval);
    this.heartbeatLag = new HeartbeatLag(config.offline_threshold * config.heartbeat_interval, () => this.now());
    this.drops = new DropCounter({ log: (line, reason) => log.warn(line, { reason }) });
  }

  /**
   * The next sequence of this process's messages: its clock in microseconds, kept rising. A node hears the members
   * of a cluster in turn and keeps each one's last sequence (GatewayReplayGuard); on one clock, sequences are also
   * comparable between members, and a member restarted starts above what it sent before.
   */
  private nextSequence(): number {
    this.sequence = Math.max(this.sequence + 1, this.now() * 1000);
    return this.sequence;
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
    // A member of a cluster adopts its organizations from now on: the server says when the first round is done.
    if (!this.routes) this.sessionsRead();
    const readingSince = this.now();
    this.unsent.reading(readingSince);
    this.heartbeatLag.start(readingSince);
    void this.receive(this.sockets.heartbeat, 'heartbeat');
    void this.receive(this.sockets.command, 'command');
    this.beats = new ServerHeartbeats(
      this.config.heartbeat_interval,
      this.config.offline_threshold * this.config.heartbeat_interval,
      {
        targets: () => this.connected(),
        beat: (org, node, identity, now) => this.beatTo(org, node, identity, now),
        roundStarted: (now) => {
          // Messages for nodes that never came back are let go once stale.
          this.unsent.expire(now);
          // A refusal older than an interval no longer holds back the next one.
          for (const [key, at] of this.refusedAt)
            if (now - at >= this.config.heartbeat_interval) this.refusedAt.delete(key);
        },
        now: () => this.now(),
      },
    );
    this.beats.start();
  }

  /** The sessions this process starts with are read: Curve handshakes held back until now are answered. */
  sessionsRead(): void {
    this.gate.opened();
  }

  /** Joins the cluster's streams: from now on, job messages for nodes connected elsewhere go to their gateway. */
  useCluster(cluster: HubCluster): void {
    if (this.me === undefined) throw new Error('a hub joins a cluster only with its member id');
    this.routes = new GatewayRoutes(this.me, cluster, this.sessions, this, this.log);
  }

  send(org: string, node: string, message: OutboundMessage, voteBy?: number): void {
    const routes = this.routes;
    if (routes && !routes.mayAct(org)) return;
    if (!routes?.sendElsewhere(org, node, message, voteBy)) this.sendHere(org, node, message, voteBy);
  }

  /** What an owner asks of this process as the gateway of some of its nodes. */
  orders(orders: readonly GatewayOrder[]): void {
    this.routes?.orders(orders);
  }

  forgetPeer(org: string, node: string): void {
    this.peers.get(org)?.delete(node);
  }

  /** Writes a job message to a node connected here, or keeps it until the node is heard. */
  sendHere(org: string, node: string, message: OutboundMessage, voteBy?: number): void {
    if (!this.sockets) return;
    const peer = this.peers.get(org)?.get(node);
    const out = { message, at: this.now(), voteBy };
    if (peer?.identity) this.write(org, node, peer, peer.identity, out);
    else this.unsent.keep(org, node, out);
  }

  /** `peer`: the node's, which keeps the commit awaiting an answer; `identity`: where to write. */
  private write(org: string, node: string, peer: Peer, identity: Buffer, out: Outgoing): void {
    const key = this.sessions.keyFor(org, node);
    if (!key || !this.sockets) return; // no session: the job's timers deal with silence
    const now = this.now();
    const { message } = out;
    const envelope = envelopeFor(org, node, this.incarnationId, this.nextSequence(), now);
    this.sockets.commandOut.push([identity, ...signedText(enveloped(message, envelope), key)], () =>
      this.unroutable(org, node, identity, out),
    );
    if (message.type === 'commit' && out.voteBy !== undefined)
      (peer.awaiting ??= new Map()).set(message.job_id, { out, writtenAt: now, voteBy: out.voteBy });
    // Anything else for the job ends the wait, and so does a rehab abort: the node's jobs count it gone.
    else if (message.job_id === null) peer.awaiting = undefined;
    else answered(peer, message.job_id);
  }

  /** Runs what vote-recovery.ts says of each commit the node has not answered, on its heartbeat. */
  private recoverVotes(org: string, node: string, peer: Peer, beat: ClientHeartbeat, at: number): void {
    if (!peer.awaiting || !peer.identity) return;
    const window = this.config.offline_threshold * this.config.heartbeat_interval;
    for (const [job, awaited] of peer.awaiting) {
      switch (recoverVote(job, awaited, beat, at, window)) {
        case 'wait':
          break;
        case 'forget':
          answered(peer, job);
          break;
        case 'resend':
          this.votesRecovered.commit_resent += 1;
          this.write(org, node, peer, peer.identity, awaited.out);
          break;
        case 'ack':
          answered(peer, job);
          this.votesRecovered.ack_from_heartbeat += 1;
          peer.actor.tell({
            type: 'answer',
            at,
            message: { type: 'ack_commit', job_id: job },
            sequence: beat.sequence,
          });
          break;
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
    this.unsent.keep(org, node, out);
  }

  /**
   * `lifetime` is what remains of the key's life, so the client renews before it runs out. In a cluster the node
   * keeps its gateway while that member lives; else it gets the member rendezvous hashing picks among the live ones,
   * which is told to read the session (so does the gateway it leaves, which stops accepting it). `ccpk`, the
   * requester's Curve key, is bound to the session (saved with it) and admitted while it lives.
   */
  async openSession(org: string, node: string, ccpk?: string): Promise<SessionGrant> {
    const routes = this.routes;
    const before = this.sessions.gatewayOf(org, node);
    const session = await this.sessions.open(org, node, routes?.choose(org, node), ccpk);
    routes?.sessionOpened(org, node, before, session.gateway);
    const ownApi = this.config.api_url;
    const gatewayServer = routes?.serverUrlOf(session.gateway, ownApi);
    return {
      key: session.key,
      lifetime: Math.floor((session.expiresAt - this.now()) / 1000),
      gateway: routes ? routes.describe(session.gateway) : this.describe(),
      servers: routes ? routes.serverUrls(ownApi) : ownApi === undefined ? [] : [ownApi],
      ...(gatewayServer === undefined ? {} : { gatewayServer }),
    };
  }

  /** The orders this gateway refused as stale, and what it did not send while a lease was in doubt (a cluster). */
  orderFigures(): { stale_orders: number; unsent_lease_in_doubt: number; answers_relayed_lease_in_doubt: number } {
    const r = this.routes;
    return {
      stale_orders: r?.staleOrders ?? 0,
      unsent_lease_in_doubt: r?.unsentInDoubt ?? 0,
      answers_relayed_lease_in_doubt: r?.answersRelayed ?? 0,
    };
  }

  gatewayOf(org: string, node: string): string | undefined {
    return this.sessions.gatewayOf(org, node);
  }

  heardAt(org: string, node: string, gateway: string): boolean {
    return this.routes?.heardAt(org, node, gateway) ?? true;
  }

  nodeState(org: string, node: string, gateway: string, record: NodeRecord): void {
    this.routes?.nodeState(org, node, gateway, record);
  }

  jobOver(org: string, job: string, gateway?: string): void {
    this.routes?.jobOver(org, job, gateway);
  }

  rollCall(org: string): void {
    this.routes?.rollCall(org);
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

  lag(at: number): ServerLag {
    return this.heartbeatLag.lag(at);
  }

  downMarked(): void {
    this.heartbeatLag.downMarked();
  }

  downDeferred(): void {
    this.heartbeatLag.downDeferred();
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
      lag: this.heartbeatLag.figures(),
      dropped: this.drops.snapshot(),
      connections: this.gate.figures(),
    };
  }

  /** Writes the session keys and the Curve key pair again (the store lost them). */
  async writeBack(): Promise<void> {
    const cluster = this.routes?.cluster;
    await this.sessions.writeBack(cluster ? (org) => cluster.owns(org) : () => true);
    if (this.curve) await saveCurveKeys(this.store, this.curve);
  }

  /** Adopted: the owner's actors take the organization's nodes connected here from the gateway's. */
  async openOrg(org: string): Promise<void> {
    await this.sessions.load([org]);
    this.peers.delete(org);
    this.routes?.cluster.gateways.forgetOrg(org);
  }

  releaseOrg(org: string): void {
    const gateways = this.routes?.cluster.gateways;
    if (!gateways) {
      this.closeOrg(org);
      return;
    }
    // The nodes stay: their next message finds their actor at this gateway, made from the records as stored now.
    this.routes?.forgetOrg(org);
    this.peers.delete(org);
    gateways.forgetOrg(org);
    void gateways.load(org);
  }

  closeOrg(org: string): void {
    this.routes?.forgetOrg(org);
    this.routes?.cluster.gateways.forgetOrg(org);
    this.sessions.forgetOrg(org);
    this.owners.forgetOrg(org);
    const prefix = nodeKey(org, '');
    this.unsent.dropOrg(org);
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
      ...envelopeFor(r.org, r.node, this.incarnationId, this.nextSequence(), now),
      retry_after_ms: r.retryAfterMs,
    };
    out.push([r.identity, ...signedText(body, key)]);
  }

  nodeDown(org: string, node: string): void {
    this.unsent.drop(org, node);
    const peer = this.peers.get(org)?.get(node);
    if (peer) peer.awaiting = undefined;
  }

  close(): void {
    this.beats?.stop();
    this.heartbeatLag.stop();
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
      keyFor: (org, node) => {
        const key = this.sessions.keyFor(org, node);
        if (key !== undefined || !this.routes) return key;
        // A node whose gateway died (or was this process's predecessor): taken over. Else one whose gateway this
        // process became while another served its organization: its key is read.
        const orphan = this.routes.adoptOrphan(org, node);
        if (orphan === undefined) keyRead = this.sessions.missing(org, node);
        return orphan;
      },
      replay: new ReplayGuard(),
      schema: 'client',
      owners: this.owners,
    };
    // A fan-out queued for the nodes (a job's commit or run) is written before more is read: the fleet gets it
    // at once, instead of each send waiting behind the reading of an answer. Then as many messages are read as
    // it held before another fan-out is waited for, so that reading and writing share the time.
    let credit = 0;
    // The read of a key a message found missing, for the message to wait on (see holdForKey).
    let keyRead: Promise<void> | undefined;
    const handle = (frames: Buffer[], retried = false): void => {
      opts.now = this.now();
      keyRead = undefined;
      const d = decodeFrames(frames, opts);
      if (!d.ok) {
        const read = keyRead as Promise<void> | undefined;
        if (d.reason === 'unknown_node' && read && !retried && this.holdForKey(read, () => handle(frames, true)))
          return;
        this.drops.record(d.reason, d.detail);
        if (d.refused) this.refuse(d.refused, opts.now);
      } else this.deliver(channel, d.message, d.identity, opts.now);
    };
    // Heartbeats are read a bounded share of each turn. At each turn's end the reader looks whether more wait (only
    // it may ask its socket: asked while a receive waits, zeromq can miss the socket's next signal and never wake).
    const yieldBefore = (taken: number): boolean => {
      if (taken < HEARTBEATS_PER_TURN) {
        // Idle only when nothing waits: zeromq lets the event loop turn every 512 receives, and a sweep that took
        // such a turn for an empty channel would forget how old the backlog is and mark its nodes down.
        this.heartbeatLag.beforeReceive(socket.readable);
        return false;
      }
      this.heartbeatLag.paused(socket.readable);
      return true;
    };
    await readUntilClosed(socket, {
      ...(channel === 'heartbeat' ? { yieldBefore } : {}),
      take: (frames) => {
        if (channel === 'heartbeat') this.heartbeatLag.took();
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

  /**
   * A message from a node whose session (or whose organization's node records) this gateway is reading: it just
   * moved here, or its organization's owner just opened it. Handled again once the read is done, instead of dropped. A node's first answer after it moved
   * (a result it could not send while its gateway was gone) is often such a message. Bounded: past the most held,
   * messages are dropped as before.
   */
  private holdForKey(read: Promise<void>, again: () => void): boolean {
    if (this.heldForKey >= MAX_HELD_FOR_KEY) return false;
    this.heldForKey += 1;
    void read.then(() => {
      this.heldForKey -= 1;
      again();
    });
    return true;
  }

  private deliver(channel: Channel, m: ClientMessage, identity: Buffer | undefined, at: number, retried = false): void {
    // Each type has its channel: a message moved to the other one is a cross-channel replay (each channel
    // keeps its own replay guard), so it is dropped before it touches anything.
    if ((m.type === 'heartbeat') !== (channel === 'heartbeat')) {
      this.drops.record('bad_body', `${m.org}/${m.node}: ${m.type} on the ${channel} channel`);
      return;
    }
    const peer = this.peer(m.org, m.node);
    if (!peer) {
      // A gateway reading the organization's node records (its first node of that organization here): the message,
      // verified already, is handed on once they are read.
      const loading = this.routes?.cluster.gateways.loading(m.org);
      const later = () => this.deliver(channel, m, identity, this.now(), true);
      if (loading && !retried && this.holdForKey(loading, later)) return;
      this.drops.record('unknown_node', `${m.org}/${m.node}: no such organization`);
      return;
    }
    if (peer.identity === undefined && identity)
      for (const out of this.unsent.take(m.org, m.node, at)) this.write(m.org, m.node, peer, identity, out);
    peer.identity = identity;
    this.accepted += 1;
    if (m.type === 'heartbeat') {
      peer.lastBeat = at;
      this.heartbeats += 1;
      this.recoverVotes(m.org, m.node, peer, m, at);
      const { incarnation_id: incarnation, job_id: job, sequence } = m;
      peer.actor.tell({ type: 'heartbeat', at, incarnation, job, sequence });
    } else {
      if (m.job_id !== null) answered(peer, m.job_id);
      const message = answerOf(m);
      // While this process's lease on the organization is in doubt (woken from a pause, cut off from Redis), its job
      // actors can store nothing and another member may own it already: the answer goes to the owner's inbox, as a
      // gateway's would, and is applied by whichever member holds the lease.
      if (peer.owned && this.routes?.relayed(m.org, m.node, at, message)) return;
      peer.actor.tell({ type: 'answer', at, message, sequence: m.sequence });
    }
  }

  private *connected(): Iterable<[string, string, Peer]> {
    for (const [org, nodes] of this.peers) for (const [node, peer] of nodes) yield [org, node, peer];
  }

  private beatTo(org: string, node: string, identity: Buffer, now: number): void {
    const key = this.sessions.keyFor(org, node);
    const out = this.sockets?.heartbeatOut;
    if (!key || !out) return;
    const body = {
      type: 'heartbeat',
      ...envelopeFor(org, node, this.incarnationId, this.nextSequence(), now),
      server: this.config.server_name,
      interval_ms: this.config.heartbeat_interval,
    };
    out.push([identity, ...signedText(body, key)]);
  }

  /** The peer of a verified sender, with its node follower spawned on its first message. */
  private peer(org: string, node: string): Peer | undefined {
    let nodes = this.peers.get(org);
    const known = nodes?.get(node);
    if (known) return known;
    const own = this.system?.nodeFollower(org, node);
    const actor = own ?? this.routes?.cluster.gateways.nodeFollower(org, node);
    if (!actor) return undefined;
    if (!nodes) {
      nodes = new Map();
      this.peers.set(org, nodes);
    }
    const peer: Peer = { identity: undefined, lastBeat: 0, actor, owned: own !== undefined, awaiting: undefined };
    nodes.set(node, peer);
    return peer;
  }
}

/** The node's vote in `job` is no longer awaited. */
function answered(peer: Peer, job: string): void {
  peer.awaiting?.delete(job);
  if (peer.awaiting?.size === 0) peer.awaiting = undefined;
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

function portOf(endpoint: string | null): number {
  const port = Number(endpoint?.slice(endpoint.lastIndexOf(':') + 1));
  if (!Number.isInteger(port) || port <= 0) throw new Error(`cannot tell the port of ${String(endpoint)}`);
  return port;
}
