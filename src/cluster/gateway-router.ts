// The cluster's gateway router: where a job message for a node goes (this process's sockets, or the stream of the
// member that is the node's gateway), which gateway a node's config names, and what an owner's orders ask of this
// process as a gateway; it answers the actors' questions of the cluster (PushCluster). The sockets, signing and
// delivery stay in the transport; this file only routes, and hands to what the transport gives it (gateway-ports.ts).
import type { Logger } from '../lib/logger.js';
import type { NodeAnswerMessage, OutboundMessage, PushDescription } from '../protocol/node-messages.js';
import { partitionOf, type Partition } from '../store/partitions.js';
import type { GatewayChoice, GatewaySessions, Here, MemberView, Orphans } from './gateway-ports.js';
import type { GatewayOrder } from './node-link-messages.js';
import { preferredGateway } from './ownership.js';
import type { OwnersRecord, PushCluster } from './push-cluster.js';

/** An order as an owner makes it, before it is stamped with the epoch of its lease. */
type Unstamped = GatewayOrder extends infer O ? (O extends GatewayOrder ? Omit<O, 'epoch'> : never) : never;

export class GatewayRouter implements PushCluster, Orphans {
  /** The gateways a job's messages went to through the streams, by `org\0job`: told when the job is over. */
  private readonly routed = new Map<string, Set<string>>();
  /** The newest owner's epoch this gateway heard orders from, by partition: older ones are refused. */
  private readonly epochs = new Map<Partition, number>();
  /** Orders refused: they came from an owner older than one heard before (GET /_status). */
  staleOrders = 0;
  /** Messages to nodes not sent: this process's lease on their organization was in doubt (GET /_status). */
  unsentInDoubt = 0;
  /** Node answers read as the owner while its lease was in doubt, handed to the owner's inbox (GET /_status). */
  answersRelayed = 0;

  constructor(
    /** This process's member id. */
    private readonly me: string,
    private readonly cluster: MemberView,
    private readonly sessions: GatewaySessions,
    private readonly here: Here,
    private readonly log: Logger,
  ) {}

  /**
   * Hands a job message to the node's gateway when that is another live member; false when it is this process, or
   * a gateway that is gone (the message waits here: the node may reconnect to this process, which takes it over).
   */
  sendElsewhere(org: string, node: string, message: OutboundMessage, voteBy?: number): boolean {
    const gateway = this.sessions.gatewayOf(org, node);
    if (gateway === undefined || gateway === this.me || !this.isLive(gateway)) return false;
    const order: Unstamped = {
      t: 'send',
      org,
      nodes: [node],
      message,
      ...(voteBy === undefined ? {} : { vote_by: voteBy }),
    };
    // One message object per fan-out: the link makes one order of all its nodes for this gateway.
    this.order(gateway, order, message);
    // An ack leaves no node holding the job, and is often for a job that is over: no gateway is told of its end.
    if (message.job_id !== null && message.type !== 'ack_result') {
      const job = jobKey(org, message.job_id);
      let gateways = this.routed.get(job);
      if (!gateways) this.routed.set(job, (gateways = new Set()));
      gateways.add(gateway);
    }
    return true;
  }

  /**
   * A node's answer read by this process as the organization's owner, while its lease is in doubt: handed to the
   * owner's inbox as a gateway's answer (true), for whichever member holds the lease to apply. False while the lease
   * is sure: this process's own actors take it.
   */
  relayed(org: string, node: string, at: number, message: NodeAnswerMessage): boolean {
    if (this.cluster.epochOf(org) !== undefined) return false;
    this.cluster.gateways.relay(org, node, at, message);
    this.answersRelayed += 1;
    return true;
  }

  /**
   * Whether this process may act for the organization now: it holds the lease on its partition and surely still does.
   * Its job and node actors run until the partition is let go; from the moment the lease is in doubt, nothing they
   * would send leaves (another member may own the organization already, and its jobs' nodes are not theirs).
   */
  mayAct(org: string): boolean {
    if (this.cluster.epochOf(org) !== undefined) return true;
    this.unsentInDoubt += 1;
    return false;
  }

  /** Writes an order for `gateway` stamped with this owner's epoch; nothing while the lease is in doubt. */
  private order(gateway: string, order: Unstamped, message?: object): void {
    const epoch = this.cluster.epochOf(order.org);
    if (epoch === undefined) this.unsentInDoubt += 1;
    else this.cluster.link.order(gateway, { ...order, epoch } as GatewayOrder, message);
  }

  /**
   * Whether an order comes from the organization's newest owner this process knows of: an order older than one
   * already obeyed, or than this process's own lease, comes from an owner that was deposed since.
   */
  private fromNewestOwner(o: GatewayOrder): boolean {
    const partition = partitionOf(o.org);
    const newest = Math.max(this.epochs.get(partition) ?? 0, this.cluster.epochOf(o.org) ?? 0);
    if (o.epoch < newest) {
      this.staleOrders += 1;
      return false;
    }
    this.epochs.set(partition, o.epoch);
    return true;
  }

  /**
   * A node keeps its gateway while that member lives; a new node, or one whose gateway left, gets the member
   * rendezvous hashing picks among the live ones (the same on every owner, for the same members).
   */
  readonly choose = (org: string, node: string): GatewayChoice => {
    return (current) => {
      const live = this.cluster.members().filter((m) => m.push !== undefined);
      if (current !== undefined && (current === this.me || live.some((m) => m.id === current))) return current;
      return (
        preferredGateway(
          org,
          node,
          live.map((m) => m.id),
        ) ?? this.me
      );
    };
  };

  /**
   * A node's session was opened or moved: its gateway, and the one it left, read it again (the one it left stops
   * accepting the node's messages).
   */
  sessionOpened(org: string, node: string, before: string | undefined, after: string | undefined): void {
    for (const gateway of new Set([before, after]))
      if (gateway !== undefined && gateway !== this.me) this.order(gateway, { t: 'session', org, node });
    if (before === this.me && after !== this.me) this.here.peers.forget(org, node);
  }

  /**
   * The key of a node whose session names a gateway that is gone (see GatewaySessions.adoptOrphan): this process is its
   * gateway now. The owner stores that; an owner elsewhere learns it from the node's `attached` event.
   */
  adoptOrphan(org: string, node: string): Buffer | undefined {
    const key = this.sessions.adoptOrphan(org, node, (g) => this.isLive(g));
    if (key !== undefined && this.cluster.owns(org)) this.moved(org, node, this.me);
    return key;
  }

  gatewayOf(org: string, node: string): string | undefined {
    return this.sessions.gatewayOf(org, node);
  }

  /** Whether the member is alive (this process always is). */
  isLive(member: string): boolean {
    return member === this.me || this.cluster.members().some((m) => m.id === member);
  }

  /**
   * Whether `gateway` speaks for the node: its gateway of record, or any once that one is gone (the move is
   * recorded then).
   */
  heardAt(org: string, node: string, gateway: string): boolean {
    const recorded = this.sessions.gatewayOf(org, node);
    if (recorded === undefined || recorded === gateway) return true;
    if (this.isLive(recorded)) return false;
    this.moved(org, node, gateway);
    return true;
  }

  /** The owner heard the node at `gateway`, its recorded gateway being gone: the session says so from now on. */
  moved(org: string, node: string, gateway: string): void {
    this.sessions.bind(org, node, gateway).then(
      () => {
        if (gateway !== this.me) this.order(gateway, { t: 'session', org, node });
      },
      (error: unknown) => this.log.warn('recording a node’s new gateway failed', { org, node, error }),
    );
  }

  /** The channels of a member as nodes reach them: this process's own, or another's as it registered them. */
  describe(id: string | undefined): PushDescription {
    const here = this.here.channels.describe();
    const push = id === undefined || id === this.me ? undefined : this.cluster.members().find((m) => m.id === id)?.push;
    return push ? { ...here, ...push } : here;
  }

  /**
   * The API URLs of the live members that accept nodes (their channels are bound), `own` (this process's)
   * included, each once and sorted: the cluster's members as a config answer lists them, for clients to try when the
   * one they ask fails. Members of older versions name none and are left out.
   */
  serverUrls(own: string | undefined): string[] {
    const urls = new Set<string>(own === undefined ? [] : [own]);
    for (const m of this.cluster.members())
      if (m.id !== this.me && m.push !== undefined && m.api_url !== undefined) urls.add(m.api_url);
    return [...urls].sort();
  }

  /** The API URL of member `id` as its nodes use it (`own`: this process's), if it names one. */
  serverUrlOf(id: string | undefined, own: string | undefined): string | undefined {
    if (id === undefined || id === this.me) return own;
    return this.cluster.members().find((m) => m.id === id)?.api_url;
  }

  /** The job is over: the gateways that were sent its messages (or `gateway` alone, which asked) are told. */
  jobOver(org: string, job: string, gateway?: string): void {
    const key = jobKey(org, job);
    const gateways = gateway === undefined ? this.routed.get(key) : new Set([gateway]);
    if (gateway === undefined) this.routed.delete(key);
    for (const g of gateways ?? []) this.order(g, { t: 'jobs_over', org, jobs: [job] });
  }

  /** The organization is not owned here any more: which gateways its jobs' messages went to is forgotten. */
  forgetOrg(org: string): void {
    const prefix = jobKey(org, '');
    for (const key of this.routed.keys()) if (key.startsWith(prefix)) this.routed.delete(key);
  }

  /** The owner's record of a node, for the gateway whose actor of it started from an older one. */
  nodeState(org: string, node: string, gateway: string, record: OwnersRecord): void {
    const { status, updated_at, incarnation } = record;
    this.order(gateway, { t: 'node_state', org, node, record: { status, updated_at, incarnation } });
  }

  /** The organization was adopted here: every other gateway says which of its nodes it holds. */
  rollCall(org: string): void {
    for (const m of this.cluster.members())
      if (m.id !== this.me && m.push !== undefined) this.order(m.id, { t: 'roll_call', org });
  }

  /** What an owner asks of this process as the gateway of some of its nodes. */
  orders(orders: readonly GatewayOrder[]): void {
    const { gateways } = this.cluster;
    for (const o of orders) {
      if (!this.fromNewestOwner(o)) continue;
      switch (o.t) {
        case 'send':
          // An ack says nothing of whether its job runs (it may be for one that ended).
          if (o.message.type !== 'ack_result') gateways.sent(o.org, o.message.job_id);
          // The owner built it as an OutboundMessage; the stream's schema checked its type and job.
          for (const node of o.nodes) this.here.send.send(o.org, node, o.message as OutboundMessage, o.vote_by);
          break;
        case 'session':
          void this.sessions.reload(o.org, o.node).then(
            () => {
              if (this.sessions.gatewayOf(o.org, o.node) === this.me) return;
              this.here.peers.forget(o.org, o.node);
              gateways.forgetNode(o.org, o.node);
            },
            (error: unknown) => this.log.warn('reading a node session failed', { org: o.org, error }),
          );
          break;
        case 'roll_call':
          gateways.rollCall(o.org);
          break;
        case 'jobs_over':
          gateways.over(o.org, o.jobs);
          break;
        case 'node_state':
          gateways.reset(o.org, o.node, { node_name: o.node, ...o.record });
          break;
      }
    }
  }
}

function jobKey(org: string, job: string): string {
  return `${org}\u0000${job}`;
}
