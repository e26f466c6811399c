// Assembles one server process from its configuration: logger, HTTP port, metrics listener, store, push-jobs
// transport, actor tree, first-start setup. The HTTP port is bound first and answers `starting` until everything
// else is up.
import { createAdaptorServer, type Http2Bindings, type HttpBindings, type ServerType } from '@hono/node-server';
import { randomUUID } from 'node:crypto';
import type { Ref } from 'nact';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ClusterStatus } from './api/status-schema.js';
import type { ServerConfig } from './config/server-config.js';
import { createApp } from './http/app.js';
import { ConnectionBudget } from './http/connection-budget.js';
import { EventStreams } from './http/event-streams.js';
import { raiseFileLimit } from './http/open-files.js';
import { MAX_BODY_BYTES } from './http/authenticate.js';
import { createStartingApp } from './http/starting.js';
import { RedisSessions, RedisSignInThrottle } from './http/ui/redis-sign-ins.js';
import { MAX_FORM_BYTES } from './http/ui/ui-app.js';
import { UI } from './http/ui/ui-env.js';
import type { Sessions } from './http/ui/sessions.js';
import type { SignInThrottle } from './http/ui/sign-in-throttle.js';
import { SignaturePool } from './auth/signature-pool.js';
import { Counters } from './lib/counters.js';
import { createLogger, type Logger } from './lib/logger.js';
import { messageOf } from './lib/thrown.js';
import { listenForMetrics, type MetricsListener } from './metrics/metrics-listener.js';
import { ServerMetrics } from './metrics/server-metrics.js';
import { firstStart } from './setup/first-start.js';
import { openStore, type StoreConfig } from './store/open-store.js';
import type { Store } from './store/store.js';
import { WatchedStore } from './store/watched-store.js';
import { RedisStore } from './store/redis-store.js';
import { ClusterBus } from './cluster/bus.js';
import { ClusterMember, type PartitionPorts } from './cluster/cluster-member.js';
import { forwarding } from './cluster/forward.js';
import { RedisOrgFeed } from './feeds/redis-org-feed.js';
import { NodeLink } from './cluster/node-link.js';
import { PushClusterSlot } from './cluster/push-cluster.js';
import type { InboxEntry, NodeEvent } from './cluster/node-link-messages.js';
import { GatewayNodes } from '../actors/push/gateway-nodes.js';
import { GLOBAL, ORGS, SETUP_DONE } from './store/collections.js';
import { markerKey } from './store/layout.js';
import { ALL_PARTITIONS, partitionOf } from './store/partitions.js';
import { PushHub } from './transport/push-hub.js';
import { ask, startSystem, type InfraSystem } from '../actors/system.js';

export interface RunningServer {
  /** `http://host:port` of the API. */
  url: string;
  /** `http://host:port/metrics` of the metrics listener, or null when metrics_port is not set. */
  metricsUrl: string | null;
  system: InfraSystem;
  hub: PushHub;
  /** The server's logger, for the parts that log on their own behalf. */
  logger: Logger;
  /** Files the first start wrote (empty on later starts). */
  setupFiles: string[];
  close(): Promise<void>;
}

export interface StartOptions {
  /** Replaces the configured store (tests give each run its own Redis key prefix). */
  store?: Store;
  /** Replaces the logger made from log_level and log_format (tests keep quiet or read the lines). */
  logger?: Logger;
  /** A port of this process's own for the requests other members pass on, beside a shared api_port. */
  ownApiPort?: number;
  /** The stored organizations this process serves from the start (default: all); others are adopted later. */
  adopt?: 'all' | readonly string[];
}

/** `env` carries Node's own request and response (@hono/node-server), which the routes read headers from. */
type Fetch = (req: Request, env: HttpBindings | Http2Bindings) => Response | Promise<Response>;

export async function startServer(config: ServerConfig, opts: StartOptions = {}): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger({ level: config.log_level, format: config.log_format });
  const httpLog = logger.child({ component: 'http' });
  let store = opts.store;
  let member: ClusterMember | undefined;
  let bus: ClusterBus | undefined;
  /** Whether this process sets a new cluster up (first start), holding every partition meanwhile. */
  let setsUp = false;
  let redisStore: RedisStore | undefined;
  const waiting = createStartingApp({
    log: httpLog,
    store: () => store,
    cluster: () => member?.status(),
  });
  let fetch: Fetch = waiting.fetch;
  const files = raiseFileLimit();
  if (files.failure !== undefined || (files.hard !== null && files.soft < files.hard))
    logger.warn('the open-file limit stays below its hard limit: raise it with ulimit -n before starting', {
      soft: files.soft,
      hard: files.hard,
      ...(files.failure === undefined ? {} : { error: files.failure }),
    });
  const budget = new ConnectionBudget({
    maxConnectionsPerAddress: config.max_connections_per_address,
    reserve: config.node_connection_reserve ?? Math.floor(files.soft / 10),
    files,
  });
  await budget.start();
  const streams = new EventStreams(config.max_event_streams, (reason) => budget.refused(reason));
  const http = await listen((req, env) => fetch(req, env), config, budget).catch(async (e) => {
    budget.stop();
    await opts.store?.close();
    throw e;
  });
  const url = urlOf(http, config.api_listen_address);
  logger.debug('HTTP port bound; it answers 503 until the server has started', { url });
  // Members sharing api_port on one machine (`processes N`) each take the requests the others pass on at a port of
  // their own: one passed to the shared port could land on any of them.
  const own =
    opts.ownApiPort === undefined
      ? undefined
      : await listen((req, env) => fetch(req, env), { ...config, api_port: opts.ownApiPort }, budget, true);
  /** Where the other members of a cluster reach this one: its own port, on the name nodes use for this host. */
  const memberUrl = urlOf(own ?? http, config.api_listen_address, config.server_name);
  /** Where nodes reach this server's API: the port the processes of a machine share, unless api_url says where. */
  const apiUrl = (config.api_url ?? urlOf(http, config.api_listen_address, config.server_name)).replace(/\/+$/, '');

  const started: {
    hub?: PushHub;
    system?: InfraSystem;
    watched?: WatchedStore;
    metrics?: MetricsListener;
    link?: JoinedLink;
  } = {};
  /** Stops whatever started, in order; once only, whether the server is closed or steps down. */
  let stopping: Promise<void> | undefined;
  const stopAll = (): Promise<void> =>
    (stopping ??= (async () => {
      standing.abort();
      await closeHttp(http);
      if (own) await closeHttp(own);
      budget.stop();
      await signatures.close();
      await started.metrics?.close();
      started.hub?.close();
      await started.link?.close();
      // Organizations are handed over first (what they accepted is stored while their leases still fence it),
      // then the system stops; it owns the store once it runs, and closes it.
      await member?.leave();
      await bus?.close();
      await (started.system ? started.system.stop() : store?.close());
    })());
  const standing = new AbortController();
  const counters = new Counters();
  const signatures = new SignaturePool({
    threads: config.signature_threads,
    observer: {
      workerCrashed: (error) => {
        counters.inc('actor_crashes', 'signature_worker');
        logger.error('a signature worker thread died; its checks were made on the main thread', { error });
      },
    },
  });
  const metrics =
    config.metrics_port === undefined
      ? undefined
      : new ServerMetrics({
          nodeCounts: () => started.system?.nodeCounts() ?? [],
          push: () => started.hub?.status(),
          counters,
          storeFailing: () => (started.watched?.failingSince ?? null) !== null,
          limits: () => budget.figures(streams.open),
        });
  try {
    if (metrics && config.metrics_port !== undefined) {
      const at = { port: config.metrics_port, host: config.metrics_listen_address };
      started.metrics = await listenForMetrics(metrics.registry, at, logger.child({ component: 'metrics' }));
      logger.info(`metrics listening on ${started.metrics.url}`);
    }
    store ??= await openStore(storeConfig(config));
    // The store's own start (the file store's recovery and its threads) is waited for, not bounded by
    // store_timeout as every operation after it is: on a busy machine it takes seconds, and the server would
    // have given up on the first write of a healthy store.
    await store.state();
    if (store instanceof RedisStore) {
      member = new ClusterMember(store, {
        id: randomUUID(),
        url: memberUrl,
        apiUrl,
        ttlMs: config.lease_ttl * 1000,
        log: logger.child({ component: 'cluster' }),
      });
      await member.join();
      const redis = (redisStore = store);
      bus = new ClusterBus(redis.redis, redis.keyPrefix, logger.child({ component: 'bus' }));
      setsUp = await member.setUpFirst(
        async () => (await redis.get(GLOBAL, SETUP_DONE.id)) !== undefined,
        standing.signal,
      );
    }
    const watched = new WatchedStore(store, config.store_timeout * 1000, {
      observeWrite: metrics?.observeStoreWrite,
    });
    started.watched = watched;
    store = watched;
    const hub = new PushHub(
      { ...config, api_url: apiUrl },
      store,
      logger.child({ component: 'push-jobs' }),
      Date.now,
      member?.id,
    );
    started.hub = hub;
    await bindHub(hub, config);
    if (member) {
      // Where nodes this member is the gateway of connect, for the config answers of every owner.
      const { heartbeat_addr, command_addr, incarnation_id } = hub.describe();
      member.members.describe({ heartbeat_addr, command_addr, incarnation_id });
      await member.members.beat();
    }
    const cluster = new PushClusterSlot();
    const system = await startSystem(store, hub.parts(cluster), {
      counters,
      log: logger.child({ component: 'actors' }),
      feeds: { keepAliveMs: config.keep_alive_time * 1000, orgExpirationMs: config.org_feed_expiration * 1000 },
      // A member of a cluster adopts its partitions' organizations as it takes their leases (below), unless it
      // holds every partition to set the cluster up.
      adopt: member && !setsUp ? [] : opts.adopt,
      ...(bus && redisStore
        ? {
            cluster: {
              bus,
              holdsAccounts: () => member?.serves('global') === true,
              storeIsWhole: storeIsWhole(redisStore),
            },
          }
        : {}),
    });
    started.system = system;
    metrics?.jobs.watch(system.feeds);
    const orgFeed = member && redisStore ? keepOrgFeeds(system, member, redisStore, config, logger) : undefined;
    if (member && redisStore) started.link = joinNodeLink(member, redisStore, hub, system, cluster, logger);
    await hub.attach(system);
    // A Redis restarted without its data: everything the server holds is written again before it counts as whole.
    watched.onLost(async () => {
      logger.warn('the store has lost its data (a Redis restarted empty?): writing back everything this server holds');
      // The leases first, with new epochs: they fence what is written back.
      await member?.leases.renew();
      await Promise.all([system.writeBack(), hub.writeBack()]);
      logger.info('everything this server holds is written back to the store');
    });
    const setupFiles =
      member && !setsUp
        ? []
        : await firstStart({
            system,
            dataDir: config.data_dir,
            orgName: config.default_orgname,
            apiUrl: url,
            log: logger.child({ component: 'setup' }),
          });
    // From here a member owns what it should: the first round is done before the API answers, so a member alone
    // serves every organization once /_status says pong.
    if (member && redisStore && started.link) {
      // The setting-up member holds every partition until it hands them over: it reads their inboxes meanwhile.
      if (setsUp) for (const p of ALL_PARTITIONS) if (p !== 'global') await started.link.link.serve(p);
      await member.run(partitionPorts(system, redisStore, started.link.link, orgFeed));
      hub.sessionsRead();
    }
    const app = createApp({
      system,
      authSkewSeconds: config.auth_skew,
      push: hub,
      log: httpLog,
      storeFailing: () => watched.failingSince !== null,
      uiSessionSeconds: config.ui_session_timeout,
      observeRequest: metrics?.observeRequest,
      signatures,
      ...(member && started.link ? { cluster: clusterStatus(member, started.link.link, hub) } : {}),
      ...(member && redisStore ? { signIns: redisSignIns(redisStore, config) } : {}),
      streams,
      budget: () => budget.figures(streams.open),
      limits: {
        jsonDepth: config.max_json_depth,
        nameLength: config.max_name_length,
        jobNodes: config.max_job_nodes,
        commandLength: config.max_command_length,
      },
    }).fetch;
    // A member of a cluster answers what it owns and passes the rest on to the owner.
    fetch = member
      ? forwarding<HttpBindings | Http2Bindings>(member, app, {
          maxBodyBytes: (path) => (path.startsWith(`${UI}/`) ? MAX_FORM_BYTES : MAX_BODY_BYTES),
          tooLarge: () =>
            Response.json({ error: `JSON must be no more than ${MAX_BODY_BYTES} bytes.` }, { status: 413 }),
        })
      : app;
    logger.info(`API listening on ${url}`);
    return {
      url,
      metricsUrl: started.metrics?.url ?? null,
      hub,
      system,
      logger,
      setupFiles,
      close: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

/** GET /_status's cluster figures: the member's, and those of the streams between members. */
function clusterStatus(member: ClusterMember, link: NodeLink, hub: PushHub): () => Promise<ClusterStatus> {
  return async () => ({ ...(await member.status()), streams: { ...link.figures(), ...hub.orderFigures() } });
}

/** A cluster keeps each organization's recent feed events in Redis, from which its next owner resumes the feed. */
function keepOrgFeeds(
  system: InfraSystem,
  member: ClusterMember,
  store: RedisStore,
  config: ServerConfig,
  logger: Logger,
): RedisOrgFeed {
  const orgFeed = new RedisOrgFeed(store.redis, {
    keyPrefix: store.keyPrefix,
    expirationMs: config.org_feed_expiration * 1000,
    tokenFor: (p) => member.leases.tokenFor(p),
    now: Date.now,
    log: logger.child({ component: 'feeds' }),
  });
  system.feeds.keepHistoryIn(orgFeed);
  return orgFeed;
}

/** A cluster's dashboard sign-ins live in Redis, where every member reads them: any member answers any page. */
function redisSignIns(store: RedisStore, config: ServerConfig): { sessions: Sessions; throttle: SignInThrottle } {
  const options = {
    keyPrefix: store.keyPrefix,
    sessionMs: config.ui_session_timeout * 1000,
    timeoutMs: config.store_timeout * 1000,
    now: Date.now,
  };
  return { sessions: new RedisSessions(store.redis, options), throttle: new RedisSignInThrottle(store.redis, options) };
}

/** Whether the store's marker is there: it is written again once what the store lost is written back. */
function storeIsWhole(store: RedisStore): () => Promise<boolean> {
  return async () => (await store.redis.exists(markerKey(store.keyPrefix))) === 1;
}

/**
 * A partition's organizations come and go with its lease, and so does reading its inbox: after its organizations
 * are restored, so that what the last owner left unacknowledged is applied to them.
 */
function partitionPorts(
  system: InfraSystem,
  store: RedisStore,
  link: NodeLink,
  orgFeed: RedisOrgFeed | undefined,
): PartitionPorts {
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

interface JoinedLink {
  link: NodeLink;
  close(): Promise<void>;
}

/**
 * Makes this member a gateway and an owner among the others: job messages for nodes connected elsewhere go through
 * their gateway's stream, and what nodes connected here say of organizations owned elsewhere goes to the owner's
 * inbox. Nodes connected to a member that leaves are watched by their owners until they connect again.
 */
function joinNodeLink(
  member: ClusterMember,
  store: RedisStore,
  hub: PushHub,
  system: InfraSystem,
  slot: PushClusterSlot,
  logger: Logger,
): JoinedLink {
  const link: NodeLink = new NodeLink(
    store.redis,
    store.keyPrefix,
    member.id,
    {
      orders: (orders) => hub.orders(orders),
      resync: () => gateways.rollCallAll(),
      inbox: (p, entry) => applyInboxEntry(system, entry, () => link.serving(p)),
    },
    logger.child({ component: 'node-link' }),
    { replicated: () => store.replication.confirm(), fencing: member.leases },
  );
  const gateways: GatewayNodes = new GatewayNodes(
    system.pushPorts,
    (event) => link.event(partitionOf(event.org), event),
    (org, node, message) => hub.local.send(org, node, message),
  );
  const partitions = new Map<string, number>();
  const partitionOfOrg = (org: string): number => {
    let p = partitions.get(org);
    if (p === undefined) partitions.set(org, (p = partitionOf(org)));
    return p;
  };
  const routes = hub.useCluster({
    link,
    gateways,
    members: () => member.members.members(),
    owns: (org) => member.serves(partitionOf(org)),
    // Asked for every message an owner sends: each organization's partition is hashed once.
    epochOf: (org) => member.leases.validEpoch(partitionOfOrg(org)),
  });
  slot.plug(routes);
  // Back from a pause past its registration: the owners counted this gateway gone and watch its nodes themselves,
  // so every node still connected here says where it is, and they stop.
  member.onRegistrationLapsed(() => gateways.rollCallAll());
  let alive = new Set(member.members.members().map((m) => m.id));
  member.onMembersChanged((members) => {
    const now = new Set(members.map((m) => m.id));
    const gone = new Set([...alive].filter((id) => !now.has(id)));
    alive = now;
    if (gone.size === 0) return;
    system.gatewaysGone(gone);
    // What owners wrote for them is read by no one: their streams go (a member that wakes starts a new one).
    link.forget(gone);
  });
  link.start();
  return {
    link,
    close: async () => {
      gateways.close();
      await link.close();
    },
  };
}

/** How long an inbox entry's organizations have to store it before it is left for a later claim. */
const INBOX_APPLY_TIMEOUT_MS = 30_000;

/**
 * Applies a gateway's entry to its organizations, in order per organization; true once all of it is stored, false
 * when an organization is not served here or its store did not answer in time. An organization not found while
 * this process reads the partition's inbox (its organizations all run by then) was deleted: what its nodes said is
 * let go.
 */
async function applyInboxEntry(system: InfraSystem, entry: InboxEntry, serving: () => boolean): Promise<boolean> {
  const byOrg = new Map<string, NodeEvent[]>();
  for (const e of entry.events) {
    let events = byOrg.get(e.org);
    if (!events) byOrg.set(e.org, (events = []));
    events.push(e);
  }
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), INBOX_APPLY_TIMEOUT_MS);
  });
  const applied = Promise.all([...byOrg].map(([org, events]) => system.fromGateway(org, entry.gateway, events))).then(
    (found) => found.every(Boolean) || serving(),
  );
  try {
    return await Promise.race([applied, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

function storeConfig(config: ServerConfig): StoreConfig {
  const { data_dir, store_timeout, redis_url, redis_min_replicas } = config;
  return {
    data_dir,
    store_timeout,
    ...(redis_url === undefined ? {} : { redis_url }),
    ...(redis_min_replicas === undefined ? {} : { redis_min_replicas }),
  };
}

async function bindHub(hub: PushHub, config: ServerConfig): Promise<void> {
  try {
    await hub.bind();
  } catch (e) {
    throw new Error(
      `cannot open the push-jobs channels (ports ${config.server_heartbeat_port} and ${config.command_port}): ${messageOf(e)}`,
      { cause: e },
    );
  }
}

/**
 * `exclusive`: a port of this process's own, even in a member of `processes N` (which share api_port); it takes the
 * requests the other members pass on, so max_connections_per_address does not apply there.
 */
function listen(fetch: Fetch, config: ServerConfig, budget: ConnectionBudget, exclusive = false): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = createAdaptorServer({
      fetch,
      // A client that sends its headers or its request a byte at a time holds a connection, an open file, for as
      // long as it likes unless these stop it; Node looks for such connections every connectionsCheckingInterval.
      serverOptions: {
        headersTimeout: config.header_timeout * 1000,
        requestTimeout: config.request_timeout * 1000,
        connectionsCheckingInterval: Math.min(1000, config.header_timeout * 500),
      },
    });
    budget.guard(server as HttpServer, !exclusive);
    server.listen({ port: config.api_port, host: config.api_listen_address, exclusive }, () => resolve(server));
    server.once('error', reject);
    // A connection that sends nothing for idle_timeout is closed, whether or not it ever sent a request.
    const http1 = server as HttpServer;
    http1.setTimeout(config.idle_timeout * 1000);
    http1.on('timeout', (socket: Socket) => socket.destroy());
    server.on('clientError', (err: Error & { code?: string }, socket: Duplex) =>
      answerClientError(err, socket, budget),
    );
  });
}

/**
 * Requests Node's parser refuses before any route sees them. An unknown method gets 405 with a JSON error, like
 * a known method no route takes; one past header_timeout or request_timeout gets 408; anything else malformed
 * gets 400, also in JSON.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex, budget: ConnectionBudget): void {
  const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? budget.timedOut(socket as Socket) : undefined;
  if (!socket.writable) return void socket.destroy();
  const [code, reason, message] =
    err.code === 'HPE_INVALID_METHOD'
      ? [405, 'Method Not Allowed', 'method not allowed']
      : timedOut !== undefined
        ? [408, 'Request Timeout', `the request took longer than ${timedOut} allows`]
        : [400, 'Bad Request', 'malformed HTTP request'];
  const body = JSON.stringify({ error: [message] });
  socket.end(
    `HTTP/1.1 ${code} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The URL clients use: a wildcard address is reached on loopback, or on `wildcardHost` when given. */
function urlOf(http: ServerType, listenAddress: string, wildcardHost = '127.0.0.1'): string {
  const port = (http.address() as AddressInfo).port;
  const host = listenAddress === '0.0.0.0' || listenAddress === '::' ? wildcardHost : listenAddress;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function closeHttp(http: ServerType): Promise<void> {
  return new Promise((resolve) => http.close(() => resolve()));
}
