// The push-jobs transport (spec 6, 8), put together from its rooms: the channels (channels.ts: sockets, the read
// loop, outboxes), the verify pipeline (verify.ts: decode, key, HMAC, replay), the peers table (peers.ts) and the
// writer (node-writer.ts: signing, sequencing, unsent messages, what was written told to the node's follower). A
// checked message is handed to its node follower here, in one hop; in a cluster, job messages for nodes connected
// elsewhere go through the gateway router (src/cluster/gateway-router.ts). The actors see this through
// PushTransport and TransportOrgs alone.
import { randomUUID } from 'node:crypto';
import type { InfraSystem } from '../../actors/system.js';
import type { GatewayNodes } from '../../actors/push/gateway-nodes.js';
import type { NodeMsg, NodeWrite } from '../../actors/push/node.js';
import {
  RECONNECT_GRACE_MAX_MS,
  type PushParts,
  type TransportOrgs,
  type PushSettings,
  type PushTransport,
  type SessionGrant,
  type VoteCounter,
} from '../../actors/push/ports.js';
import type { PushLag, VotesRecovered } from '../api/status-schema.js';
import type { ServerConfig } from '../config/server-config.js';
import type { Logger } from '../lib/logger.js';
import { messageOf } from '../lib/thrown.js';
import type { ClientMessage } from '../protocol/messages.js';
import { nodeAnswerOf, type OutboundMessage, type PushDescription } from '../protocol/node-messages.js';
import { DropCounter, NodeHolders } from '../protocol/receive.js';
import type { Store } from '../store/store.js';
import type { MemberView } from '../cluster/gateway-ports.js';
import { GatewayRouter } from '../cluster/gateway-router.js';
import type { GatewayOrder } from '../cluster/node-link-messages.js';
import { SOLE_PROCESS, type PushCluster } from '../cluster/push-cluster.js';
import { PushChannels, type Channel } from './channels.js';
import type { ZmqConnections } from './connection-watch.js';
import { loadCurveKeys, saveCurveKeys, type CurveKeys } from './curve-keys.js';
import { HeartbeatLag } from './heartbeat-lag.js';
import { HeldForRead } from './held-for-read.js';
import { NodeWriter } from './node-writer.js';
import { PeerGate } from './peer-gate.js';
import { PeerTable, type Peer } from './peers.js';
import { ServerHeartbeats } from './server-heartbeats.js';
import { SessionKeys } from './session-keys.js';
import { Unsent } from './unsent.js';
import { Verifier } from './verify.js';

export { LISTEN_BACKLOG } from './channels.js';

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
  | 'schedule_catchup'
  | 'redis_url'
  | 'lease_ttl'
  | 'handshake_timeout'
  | 'api_url'
>;

/** The cluster as the hub sees it: the router's view, with the gateway's node followers whole. */
export interface HubCluster extends MemberView {
  gateways: GatewayNodes;
}

export class PushHub implements PushTransport, TransportOrgs {
  readonly settings: PushSettings;
  readonly incarnationId = randomUUID();
  readonly drops: DropCounter;
  /** How far behind the heartbeat channel is read, measured once reading starts: the actors' ServerLagMeter. */
  readonly lagMeter: HeartbeatLag;
  /** Messages verified and handed to their node follower, for GET /_status and load figures. */
  private accepted = 0;
  /** What a follower asked to write while told a node's message (see tell); empty between messages. */
  private readonly followerWrites: NodeWrite[] = [];
  private heartbeats = 0;
  /** Votes the node followers recovered from heartbeats (a lost commit written again, a lost ack read). */
  private readonly votesRecovered: VotesRecovered = { commit_resent: 0, ack_from_heartbeat: 0 };
  private readonly votes: VoteCounter = { recovered: (how) => void (this.votesRecovered[how] += 1) };
  private readonly sessions: SessionKeys;
  /** Bounds frames and handshakes, admits only Curve keys nodes named, and counts what it refused. */
  private readonly gate: PeerGate;
  private readonly channels: PushChannels;
  private readonly peers: PeerTable;
  private readonly writer: NodeWriter;
  private readonly verifier: Verifier;
  /** Messages waiting for a read: their node's session, or their organization's node records at a gateway. */
  private readonly held = new HeldForRead();
  private curve: CurveKeys | null = null;
  /** Which client process holds each node, for both channels (see NodeHolders). */
  private readonly holders: NodeHolders;
  /** Messages to nodes not reachable yet, written when they are. */
  private readonly unsent: Unsent;
  private system: InfraSystem | undefined;
  /** Where job messages go in a cluster (undefined on one process: every node is connected here). */
  private routes: GatewayRouter | undefined;
  /** What this member sees of the cluster it joined (undefined on one process). */
  private cluster: HubCluster | undefined;
  private beats: ServerHeartbeats | undefined;

  constructor(
    private readonly config: HubConfig,
    readonly store: Store,
    private readonly log: Logger,
    readonly now: () => number = Date.now,
    /** This process's member id in a cluster: the gateway its nodes' sessions name. */
    private readonly me?: string,
  ) {
    const window = config.offline_threshold * config.heartbeat_interval;
    this.settings = {
      voting_timeout: config.voting_timeout,
      heartbeat_interval: config.heartbeat_interval,
      offline_threshold: config.offline_threshold,
      online_threshold: config.online_threshold,
      job_retention_days: config.job_retention_days,
      schedule_catchup_ms: config.schedule_catchup * 1000,
      // A cluster's owner dies with its lease still running, and the nodes' config fetches back off meanwhile.
      takeover_grace_ms: config.redis_url === undefined ? 0 : 2 * config.lease_ttl * 1000,
    };
    this.gate = new PeerGate(config, now, `infra-push-${this.incarnationId}`);
    this.sessions = new SessionKeys(store, config.session_key_lifetime, now, me, this.gate.admitted);
    this.unsent = new Unsent(window + RECONNECT_GRACE_MAX_MS);
    this.holders = new NodeHolders(window);
    this.lagMeter = new HeartbeatLag(window, () => this.now());
    this.drops = new DropCounter({ log: (line, reason) => log.warn(line, { reason }) });
    this.channels = new PushChannels(config, this.incarnationId, this.gate, this.lagMeter, log);
    this.peers = new PeerTable((org, node) => this.followerOf(org, node));
    const { sessions, channels, peers, unsent, incarnationId } = this;
    this.writer = new NodeWriter(config, { channels, sessions, peers, unsent, incarnationId, now: () => this.now() });
    this.verifier = new Verifier(
      config,
      {
        sessions,
        holders: this.holders,
        drops: this.drops,
        held: this.held,
        now: () => this.now(),
        orphans: () => this.routes,
      },
      {
        checked: (channel, message, identity, at) => this.deliver(channel, message, identity, at),
        refused: (refusal, at) => this.writer.refuse(refusal, at),
      },
    );
  }

  /** What the actor tree is given of the push-jobs transport: each port its own object where it can be. */
  parts(cluster: PushCluster = SOLE_PROCESS): PushParts {
    return { transport: this, orgs: this, settings: this.settings, lag: this.lagMeter, cluster, votes: this.votes };
  }

  /** Loads the Curve key pair and binds both channels (port 0 picks a free port). */
  async bind(): Promise<void> {
    this.curve = this.config.curve_encryption
      ? await loadCurveKeys(this.store).catch((e: unknown) => {
          throw new Error(`the CurveZMQ key pair could not be read or saved: ${messageOf(e)}`, { cause: e });
        })
      : null;
    await this.channels.bind(this.curve);
  }

  /** Starts taking messages for the actor tree and sending server heartbeats. */
  async attach(system: InfraSystem): Promise<void> {
    this.system = system;
    if (!this.channels.bound) throw new Error('the push-jobs hub must be bound before it is attached');
    // The organizations adopted so far loaded their session keys (openOrg) as they were adopted.
    system.resumePush();
    // A member of a cluster adopts its organizations from now on: the server says when the first round is done.
    if (!this.routes) this.sessionsRead();
    const readingSince = this.now();
    this.unsent.reading(readingSince);
    this.lagMeter.start(readingSince);
    this.channels.read((channel, frames) => this.verifier.take(channel, frames));
    this.beats = new ServerHeartbeats(
      this.config.heartbeat_interval,
      this.config.offline_threshold * this.config.heartbeat_interval,
      {
        targets: () => this.peers.all(),
        beat: (org, node, identity, now) => this.writer.beat(org, node, identity, now),
        roundStarted: (now) => this.writer.roundStarted(now),
        now: () => this.now(),
      },
    );
    this.beats.start();
  }

  /** The sessions this process starts with are read: Curve handshakes held back until now are answered. */
  sessionsRead(): void {
    this.gate.opened();
  }

  /**
   * Joins the cluster's streams: from now on, job messages for nodes connected elsewhere go to their gateway. The
   * router it returns answers the actors' questions of the cluster (PushCluster).
   */
  useCluster(cluster: HubCluster): GatewayRouter {
    if (this.me === undefined) throw new Error('a hub joins a cluster only with its member id');
    const here = { send: this.writer, peers: this.peers, channels: this.channels };
    this.cluster = cluster;
    this.routes = new GatewayRouter(this.me, cluster, this.sessions, here, this.log);
    return this.routes;
  }

  send(org: string, node: string, message: OutboundMessage, voteBy?: number): void {
    const routes = this.routes;
    if (routes && !routes.mayAct(org)) return;
    if (!routes?.sendElsewhere(org, node, message, voteBy)) this.writer.send(org, node, message, voteBy);
  }

  /** What an owner asks of this process as the gateway of some of its nodes. */
  orders(orders: readonly GatewayOrder[]): void {
    this.routes?.orders(orders);
  }

  /** Writes job messages to nodes connected to this process (or keeps them until the node is heard). */
  get local(): { send(org: string, node: string, message: OutboundMessage, voteBy?: number): void } {
    return this.writer;
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

  describe(): PushDescription {
    return this.channels.describe();
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
    return {
      connected_nodes: this.peers.beatingSince(since),
      accepted: this.accepted,
      heartbeats: this.heartbeats,
      votes_recovered: { ...this.votesRecovered },
      lag: this.lagMeter.figures(),
      dropped: this.drops.snapshot(),
      connections: this.gate.figures(),
    };
  }

  /** Writes the session keys and the Curve key pair again (the store lost them). */
  async writeBack(): Promise<void> {
    const { cluster } = this;
    await this.sessions.writeBack(cluster ? (org) => cluster.owns(org) : () => true);
    if (this.curve) await saveCurveKeys(this.store, this.curve);
  }

  /** Adopted: the owner's followers take the organization's nodes connected here from the gateway's. */
  async openOrg(org: string): Promise<void> {
    await this.sessions.load([org]);
    this.peers.forgetOrg(org);
    this.cluster?.gateways.forgetOrg(org);
  }

  releaseOrg(org: string): void {
    const gateways = this.cluster?.gateways;
    if (!gateways) {
      this.closeOrg(org);
      return;
    }
    // The nodes stay: their next message finds their follower at this gateway, made from the records as stored now.
    this.routes?.forgetOrg(org);
    this.peers.forgetOrg(org);
    gateways.forgetOrg(org);
    void gateways.load(org);
  }

  closeOrg(org: string): void {
    this.routes?.forgetOrg(org);
    this.cluster?.gateways.forgetOrg(org);
    this.sessions.forgetOrg(org);
    this.holders.forgetOrg(org);
    this.writer.forgetOrg(org);
    this.peers.forgetOrg(org);
  }

  nodeDown(org: string, node: string): void {
    this.writer.nodeDown(org, node);
  }

  close(): void {
    this.beats?.stop();
    this.lagMeter.stop();
    this.channels.close();
    this.gate.close();
  }

  /** The follower of a verified sender: this process's own as the owner, else its gateway's. */
  private followerOf(org: string, node: string) {
    const own = this.system?.nodeFollower(org, node);
    if (own) return { follower: own, owned: true };
    const gateway = this.cluster?.gateways.nodeFollower(org, node);
    return gateway ? { follower: gateway, owned: false } : undefined;
  }

  /** A checked message, handed to its node's follower. */
  private deliver(channel: Channel, m: ClientMessage, identity: Buffer | undefined, at: number, retried = false): void {
    // Each type has its channel: a message moved to the other one is a cross-channel replay (each channel
    // keeps its own replay guard), so it is dropped before it touches anything.
    if ((m.type === 'heartbeat') !== (channel === 'heartbeat')) {
      this.drops.record('bad_body', `${m.org}/${m.node}: ${m.type} on the ${channel} channel`);
      return;
    }
    const peer = this.peers.heard(m.org, m.node);
    if (!peer) {
      // A gateway reading the organization's node records (its first node of that organization here): the message,
      // verified already, is handed on once they are read.
      const loading = this.cluster?.gateways.loading(m.org);
      const later = () => this.deliver(channel, m, identity, this.now(), true);
      if (loading && !retried && this.held.hold(loading, later)) return;
      this.drops.record('unknown_node', `${m.org}/${m.node}: no such organization`);
      return;
    }
    if (peer.identity === undefined && identity) this.writer.reached(m.org, m.node, peer, identity, at);
    peer.identity = identity;
    this.accepted += 1;
    if (m.type === 'heartbeat') this.heartbeat(peer, m, at);
    else this.answer(peer, m, at);
  }

  private heartbeat(peer: Peer, m: Extract<ClientMessage, { type: 'heartbeat' }>, at: number): void {
    peer.lastBeat = at;
    this.heartbeats += 1;
    const { incarnation_id: incarnation, job_id: job, job_state, sequence } = m;
    this.tell(peer, m.org, m.node, { type: 'heartbeat', at, incarnation, job, job_state, sequence });
  }

  /**
   * Tells the node's follower, then writes what it asked to write: an owner's through the routes (as a job's are),
   * a gateway's to the node's connection here. The follower never calls the transport back.
   */
  private tell(peer: Peer, org: string, node: string, msg: NodeMsg): void {
    const writes = this.followerWrites;
    peer.follower.tell(msg, writes);
    if (writes.length === 0) return; // the hot path: a heartbeat that writes nothing
    for (const w of writes.splice(0))
      if (peer.owned) this.send(org, node, w.message, w.voteBy);
      else this.writer.send(org, node, w.message, w.voteBy);
  }

  private answer(peer: Peer, m: Exclude<ClientMessage, { type: 'heartbeat' }>, at: number): void {
    const message = nodeAnswerOf(m);
    // While this process's lease on the organization is in doubt (woken from a pause, cut off from Redis), its job
    // actors can store nothing and another member may own it already: the answer goes to the owner's inbox, as a
    // gateway's would, and is applied by whichever member holds the lease. The follower here still learns that the
    // node answered, so it does not wait for that vote.
    if (peer.owned && this.routes?.relayed(m.org, m.node, at, message)) {
      if (m.job_id !== null) this.tell(peer, m.org, m.node, { type: 'answer_relayed', at, job_id: m.job_id });
      return;
    }
    this.tell(peer, m.org, m.node, { type: 'answer', at, message, sequence: m.sequence });
  }
}
