// A member of a cluster, wired into the server: its registration and leases, the hint bus, the streams between
// owners and gateways (the node link), the organization feeds and dashboard sign-ins kept in Redis, and the
// forwarding of requests to the organization's owner. server.ts calls one method of this at each step of its start.
import type { Ref } from 'nact';
import { randomUUID } from 'node:crypto';
import { GatewayNodes } from '../../actors/push/gateway-nodes.js';
import { ask, type InfraSystem, type SystemOptions } from '../../actors/system.js';
import type { ClusterStatus } from '../api/status-schema.js';
import { ClusterBus } from '../cluster/bus.js';
import { ClusterMember, type PartitionPorts } from '../cluster/cluster-member.js';
import { forwarding } from '../cluster/forward.js';
import { NodeLink } from '../cluster/node-link.js';
import type { InboxEntry, GatewayReport } from '../cluster/node-link-messages.js';
import type { PushClusterSlot } from '../cluster/push-cluster.js';
import type { ServerConfig } from '../config/server-config.js';
import { RedisOrgFeed } from '../feeds/redis-org-feed.js';
import { MAX_BODY_BYTES } from '../http/authenticate.js';
import { RedisSessions, RedisSignInThrottle } from '../http/ui/redis-sign-ins.js';
import type { Sessions } from '../http/ui/sessions.js';
import type { SignInThrottle } from '../http/ui/sign-in-throttle.js';
import { MAX_FORM_BYTES } from '../http/ui/ui-app.js';
import { UI } from '../http/ui/ui-env.js';
import type { Logger } from '../lib/logger.js';
import { realTimers, type Timers } from '../lib/timers.js';
import { ALL_PARTITIONS, partitionOf } from '../store/partitions.js';
import { GLOBAL, ORGS, SETUP_DONE } from '../store/collections.js';
import { markerKey } from '../store/layout.js';
import type { RedisStore } from '../store/redis-store.js';
import type { PushHub } from '../transport/push-hub.js';
import type { Fetch } from './http-listeners.js';

/** How long an inbox entry's organizations have to store it before it is left for a later claim. */
const INBOX_APPLY_TIMEOUT_MS = 30_000;

export interface MemberUrls {
  /** Where the other members reach this one. */
  member: string;
  /** Where nodes reach this member's API. */
  api: string;
}

export class ClusterWiring {
  readonly member: ClusterMember;
  private bus: ClusterBus | undefined;
  private settingUp = false;
  private link: NodeLink | undefined;
  private gateways: GatewayNodes | undefined;
  private orgFeed: RedisOrgFeed | undefined;

  constructor(
    private readonly store: RedisStore,
    urls: MemberUrls,
    config: ServerConfig,
    private readonly logger: Logger,
  ) {
    this.member = new ClusterMember(store, {
      id: randomUUID(),
      url: urls.member,
      apiUrl: urls.api,
      ttlMs: config.lease_ttl * 1000,
      log: logger.child({ component: 'cluster' }),
    });
  }

  /**
   * Registers this process as a member; the first of a new cluster sets it up (see ClusterMember.setUpFirst).
   * Resolves whether this one does: it then runs the first start's setup, and the others do not.
   */
  async join(signal: AbortSignal): Promise<boolean> {
    const { member, store } = this;
    await member.join();
    this.bus = new ClusterBus(store.redis, store.keyPrefix, this.logger.child({ component: 'bus' }));
    this.settingUp = await member.setUpFirst(
      async () => (await store.get(GLOBAL, SETUP_DONE.id)) !== undefined,
      signal,
    );
    return this.settingUp;
  }

  /**
   * This process sets a new cluster up (first start), holding every partition meanwhile: it runs the first start's
   * setup and adopts the stored organizations from the start; other members adopt theirs as they take leases.
   */
  get setsUp(): boolean {
    return this.settingUp;
  }

  /** Where nodes this member is the gateway of connect, for the config answers of every owner. */
  async describe(hub: PushHub): Promise<void> {
    const { heartbeat_addr, command_addr, incarnation_id } = hub.describe();
    this.member.members.describe({ heartbeat_addr, command_addr, incarnation_id });
    await this.member.members.beat();
  }

  /** What the actor tree needs of the cluster: the hint bus, and who writes the accounts. */
  systemOptions(): NonNullable<SystemOptions['cluster']> {
    const { store, bus } = this;
    if (!bus) throw new Error('the cluster gives the actors its bus once it has joined');
    return {
      bus,
      holdsAccounts: () => this.member.serves('global'),
      // Whether the store's marker is there: it is written again once what the store lost is written back.
      storeIsWhole: async () => (await store.redis.exists(markerKey(store.keyPrefix))) === 1,
    };
  }

  /**
   * Joins the streams between members once the actors run: job messages for nodes connected elsewhere go through
   * their gateway's stream, and what nodes connected here say of organizations owned elsewhere goes to the owner's
   * inbox; the actors' questions of the cluster go to the gateway router from now on. Each organization's recent
   * feed events are kept in Redis, for its next owner to resume.
   */
  attach(system: InfraSystem, hub: PushHub, slot: PushClusterSlot, config: ServerConfig, timers = realTimers): void {
    const { member, store, logger } = this;
    this.orgFeed = new RedisOrgFeed(store.redis, {
      keyPrefix: store.keyPrefix,
      expirationMs: config.org_feed_expiration * 1000,
      tokenFor: (p) => member.leases.tokenFor(p),
      now: Date.now,
      log: logger.child({ component: 'feeds' }),
    });
    system.feeds.keepHistoryIn(this.orgFeed);
    const link: NodeLink = new NodeLink(
      store.redis,
      store.keyPrefix,
      member.id,
      {
        orders: (orders) => hub.orders(orders),
        resync: () => gateways.rollCallAll(),
        inbox: (p, entry) => applyInboxEntry(system, entry, () => link.serving(p), timers),
      },
      logger.child({ component: 'node-link' }),
      { replicated: () => store.replication.confirm(), fencing: member.leases, timers },
    );
    const gateways: GatewayNodes = new GatewayNodes(
      system.pushPorts,
      (event) => link.event(partitionOf(event.org), event),
      (org, node, message, voteBy) => hub.local.send(org, node, message, voteBy),
    );
    this.link = link;
    this.gateways = gateways;
    const partitions = new Map<string, number>();
    const partitionOfOrg = (org: string): number => {
      let p = partitions.get(org);
      if (p === undefined) partitions.set(org, (p = partitionOf(org)));
      return p;
    };
    slot.plug(
      hub.useCluster({
        link,
        gateways,
        members: () => member.members.members(),
        owns: (org) => member.serves(partitionOf(org)),
        // Asked for every message an owner sends: each organization's partition is hashed once.
        epochOf: (org) => member.leases.validEpoch(partitionOfOrg(org)),
      }),
    );
    this.watchMembers(system, link, gateways);
    link.start();
  }

  /**
   * Back from a pause past its registration, the owners counted this gateway gone and watch its nodes themselves:
   * every node still connected here says where it is, and they stop. Nodes connected to a member that leaves are
   * watched by their owners until they connect again, and what owners wrote for it is read by no one.
   */
  private watchMembers(system: InfraSystem, link: NodeLink, gateways: GatewayNodes): void {
    const { member } = this;
    member.onRegistrationLapsed(() => gateways.rollCallAll());
    let alive = new Set(member.members.members().map((m) => m.id));
    member.onMembersChanged((members) => {
      const now = new Set(members.map((m) => m.id));
      const gone = new Set([...alive].filter((id) => !now.has(id)));
      alive = now;
      if (gone.size === 0) return;
      system.gatewaysGone(gone);
      // Their streams go (a member that wakes starts a new one).
      link.forget(gone);
    });
  }

  /**
   * Takes what this member should own: the first round is done before the API answers, so a member alone serves
   * every organization once /_status says pong. The setting-up member holds every partition until it hands them
   * over, and reads their inboxes meanwhile.
   */
  async run(system: InfraSystem, hub: PushHub): Promise<void> {
    const link = this.attached();
    if (this.setsUp) for (const p of ALL_PARTITIONS) if (p !== 'global') await link.serve(p);
    await this.member.run(this.partitionPorts(system, link));
    hub.sessionsRead();
  }

  /** GET /_status's cluster figures, and the dashboard's sign-ins kept where every member reads them. */
  appOptions(hub: PushHub, config: ServerConfig): { cluster: () => Promise<ClusterStatus>; signIns: SignIns } {
    const link = this.attached();
    return {
      cluster: async () => ({ ...(await this.member.status()), streams: { ...link.figures(), ...hub.orderFigures() } }),
      signIns: redisSignIns(this.store, config),
    };
  }

  /** This member answers what it owns and passes the rest on to the owner. */
  forwarding(app: Fetch): Fetch {
    return forwarding(this.member, app, {
      maxBodyBytes: (path) => (path.startsWith(`${UI}/`) ? MAX_FORM_BYTES : MAX_BODY_BYTES),
      tooLarge: () => Response.json({ error: `JSON must be no more than ${MAX_BODY_BYTES} bytes.` }, { status: 413 }),
    });
  }

  /** The streams closed, then the organizations handed over (what they accepted is stored while their leases fence it). */
  async close(): Promise<void> {
    this.gateways?.close();
    await this.link?.close();
    await this.member.leave();
    await this.bus?.close();
  }

  private attached(): NodeLink {
    if (!this.link) throw new Error('the cluster is wired once the actors run (attach)');
    return this.link;
  }

  /**
   * A partition's organizations come and go with its lease, and so does reading its inbox: after its organizations
   * are restored, so that what the last owner left unacknowledged is applied to them.
   */
  private partitionPorts(system: InfraSystem, link: NodeLink): PartitionPorts {
    const { store, orgFeed } = this;
    return {
      adopt: async (p) => {
        // The accounts as stored, before this process writes them: its copy follows hints, and some may be lost.
        if (p === 'global') {
          await ask(system.users, (replyTo: Ref<boolean>) => ({ type: 'reload' as const, take: true, replyTo }));
          return;
        }
        const names = await store.idsIn(ORGS, p);
        // Each organization's feed resumes where its last owner left it, before its jobs publish anything here.
        const feeds = await Promise.all(names.map((name) => orgFeed?.load(name) ?? []));
        for (const [i, name] of names.entries()) {
          system.feeds.resumeOrg(name, feeds[i] ?? []);
          await system.adoptOrg(name);
        }
        await link.serve(p);
      },
      release: async (p) => {
        if (p === 'global') return;
        link.unserve(p);
        await Promise.all(
          system
            .orgNames()
            .filter((name) => partitionOf(name) === p)
            .map((name) => system.releaseOrg(name)),
        );
      },
    };
  }
}

type SignIns = { sessions: Sessions; throttle: SignInThrottle };

/** A cluster's dashboard sign-ins live in Redis, where every member reads them: any member answers any page. */
function redisSignIns(store: RedisStore, config: ServerConfig): SignIns {
  const options = {
    keyPrefix: store.keyPrefix,
    sessionMs: config.ui_session_timeout * 1000,
    timeoutMs: config.store_timeout * 1000,
    now: Date.now,
  };
  return { sessions: new RedisSessions(store.redis, options), throttle: new RedisSignInThrottle(store.redis, options) };
}

/**
 * Applies a gateway's entry to its organizations, in order per organization; true once all of it is stored, false
 * when an organization is not served here or its store did not answer in time. An organization not found while
 * this process reads the partition's inbox (its organizations all run by then) was deleted: what its nodes said is
 * let go.
 */
async function applyInboxEntry(
  system: InfraSystem,
  entry: InboxEntry,
  serving: () => boolean,
  timers: Timers,
): Promise<boolean> {
  const byOrg = new Map<string, GatewayReport[]>();
  for (const e of entry.events) {
    let events = byOrg.get(e.org);
    if (!events) byOrg.set(e.org, (events = []));
    events.push(e);
  }
  let cancel: (() => void) | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    cancel = timers.after(INBOX_APPLY_TIMEOUT_MS, () => resolve(false));
  });
  const applied = Promise.all([...byOrg].map(([org, events]) => system.fromGateway(org, entry.gateway, events))).then(
    (found) => found.every(Boolean) || serving(),
  );
  try {
    return await Promise.race([applied, timedOut]);
  } finally {
    cancel?.();
  }
}
