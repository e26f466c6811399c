// Assembles one server process from its configuration: logger, HTTP port, metrics listener, store, push-jobs
// transport, actor tree, first-start setup, and in a cluster the member's wiring (wiring/cluster.ts). The HTTP port
// is bound first and answers `starting` until everything else is up.
import type { ServerType } from '@hono/node-server';
import { SignaturePool } from './auth/signature-pool.js';
import { PushClusterSlot } from './cluster/push-cluster.js';
import type { ServerConfig } from './config/server-config.js';
import { createApp } from './http/app.js';
import { ConnectionBudget } from './http/connection-budget.js';
import { EventStreams } from './http/event-streams.js';
import { raiseFileLimit } from './http/open-files.js';
import { createStartingApp } from './http/starting.js';
import { Counters } from './lib/counters.js';
import { createLogger, type Logger } from './lib/logger.js';
import { messageOf } from './lib/thrown.js';
import { listenForMetrics, type MetricsListener } from './metrics/metrics-listener.js';
import { ServerMetrics } from './metrics/server-metrics.js';
import { firstStart } from './setup/first-start.js';
import { openStore, type StoreConfig } from './store/open-store.js';
import { RedisStore } from './store/redis-store.js';
import type { Store } from './store/store.js';
import { WatchedStore } from './store/watched-store.js';
import { PushHub } from './transport/push-hub.js';
import { ClusterWiring } from './wiring/cluster.js';
import { closeHttp, listen, urlOf, type Fetch } from './wiring/http-listeners.js';
import { startSystem, type InfraSystem } from '../actors/system.js';

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

export async function startServer(config: ServerConfig, opts: StartOptions = {}): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger({ level: config.log_level, format: config.log_format });
  const start = new ServerStart(config, opts, logger);
  await start.bindHttp();
  try {
    return await start.run();
  } catch (e) {
    await start.stop();
    throw e;
  }
}

/** One start of a server: what it has started so far, in order, and how it stops whatever that is. */
class ServerStart {
  private readonly counters = new Counters();
  private readonly signatures: SignaturePool;
  private readonly budget: ConnectionBudget;
  private readonly streams: EventStreams;
  private readonly standing = new AbortController();
  private fetch: Fetch;
  private http: ServerType | undefined;
  /** A port of this process's own, beside a shared api_port (see StartOptions.ownApiPort). */
  private own: ServerType | undefined;
  private store: Store | undefined;
  private cluster: ClusterWiring | undefined;
  private watched: WatchedStore | undefined;
  private hub: PushHub | undefined;
  private system: InfraSystem | undefined;
  private metrics: MetricsListener | undefined;
  private serverMetrics: ServerMetrics | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly config: ServerConfig,
    private readonly opts: StartOptions,
    private readonly logger: Logger,
  ) {
    this.store = opts.store;
    const files = raiseFileLimit();
    if (files.failure !== undefined || (files.hard !== null && files.soft < files.hard))
      logger.warn('the open-file limit stays below its hard limit: raise it with ulimit -n before starting', {
        soft: files.soft,
        hard: files.hard,
        ...(files.failure === undefined ? {} : { error: files.failure }),
      });
    this.budget = new ConnectionBudget({
      maxConnectionsPerAddress: config.max_connections_per_address,
      reserve: config.node_connection_reserve ?? Math.floor(files.soft / 10),
      files,
    });
    this.streams = new EventStreams(config.max_event_streams, (reason) => this.budget.refused(reason));
    this.signatures = new SignaturePool({
      threads: config.signature_threads,
      observer: {
        workerCrashed: (error) => {
          this.counters.inc('actor_crashes', 'signature_worker');
          logger.error('a signature worker thread died; its checks were made on the main thread', { error });
        },
      },
    });
    this.fetch = createStartingApp({
      log: logger.child({ component: 'http' }),
      store: () => this.store,
      cluster: () => this.cluster?.member.status(),
    }).fetch;
  }

  /** The HTTP port first: it answers `starting` (503) until the server has started. */
  async bindHttp(): Promise<void> {
    const { config, budget } = this;
    await budget.start();
    this.http = await listen((req, env) => this.fetch(req, env), config, budget).catch(async (e) => {
      budget.stop();
      await this.opts.store?.close();
      throw e;
    });
    this.logger.debug('HTTP port bound; it answers 503 until the server has started', { url: this.url });
    // Members sharing api_port on one machine (`processes N`) each take the requests the others pass on at a port of
    // their own: one passed to the shared port could land on any of them.
    const ownPort = this.opts.ownApiPort;
    if (ownPort !== undefined)
      this.own = await listen((req, env) => this.fetch(req, env), { ...config, api_port: ownPort }, budget, true);
  }

  private get url(): string {
    return urlOf(this.bound, this.config.api_listen_address);
  }

  private get bound(): ServerType {
    if (!this.http) throw new Error('the HTTP port is bound first');
    return this.http;
  }

  async run(): Promise<RunningServer> {
    const { config, logger } = this;
    const serverMetrics = (this.serverMetrics = this.newServerMetrics());
    if (serverMetrics && config.metrics_port !== undefined) {
      const at = { port: config.metrics_port, host: config.metrics_listen_address };
      this.metrics = await listenForMetrics(serverMetrics.registry, at, logger.child({ component: 'metrics' }));
      logger.info(`metrics listening on ${this.metrics.url}`);
    }
    const store = await this.openStore(serverMetrics);
    const hub = await this.bindHub(store);
    const slot = new PushClusterSlot();
    const system = await this.startActors(store, hub, slot);
    serverMetrics?.jobs.watch(system.feeds);
    this.cluster?.attach(system, hub, slot, config);
    await hub.attach(system);
    this.writeBackOnLoss(system, hub);
    // A member of a cluster runs the first start's setup only when it sets the cluster up.
    const setupFiles =
      this.cluster && !this.cluster.setsUp
        ? []
        : await firstStart({
            system,
            dataDir: config.data_dir,
            orgName: config.default_orgname,
            apiUrl: this.url,
            log: logger.child({ component: 'setup' }),
          });
    await this.cluster?.run(system, hub);
    this.serve(system, hub);
    logger.info(`API listening on ${this.url}`);
    return {
      url: this.url,
      metricsUrl: this.metrics?.url ?? null,
      hub,
      system,
      logger,
      setupFiles,
      close: () => this.stop(),
    };
  }

  private newServerMetrics(): ServerMetrics | undefined {
    if (this.config.metrics_port === undefined) return undefined;
    return new ServerMetrics({
      nodeCounts: () => this.system?.nodeCounts() ?? [],
      push: () => this.hub?.status(),
      counters: this.counters,
      storeFailing: () => (this.watched?.failingSince ?? null) !== null,
      limits: () => this.budget.figures(this.streams.open),
    });
  }

  /** The store, and on Redis this process's membership of the cluster; what the server uses is watched. */
  private async openStore(metrics: ServerMetrics | undefined): Promise<WatchedStore> {
    const { config, logger } = this;
    const store = (this.store ??= await openStore(storeConfig(config)));
    // The store's own start (the file store's recovery and its threads) is waited for, not bounded by
    // store_timeout as every operation after it is: on a busy machine it takes seconds, and the server would
    // have given up on the first write of a healthy store.
    await store.state();
    if (store instanceof RedisStore) {
      // Where the other members reach this one: its own port, on the name nodes use for this host.
      const member = urlOf(this.own ?? this.bound, config.api_listen_address, config.server_name);
      this.cluster = new ClusterWiring(store, { member, api: this.apiUrl }, config, logger);
      await this.cluster.join(this.standing.signal);
    }
    this.watched = new WatchedStore(store, config.store_timeout * 1000, { observeWrite: metrics?.observeStoreWrite });
    this.store = this.watched;
    return this.watched;
  }

  /** Where nodes reach this server's API: the port the processes of a machine share, unless api_url says where. */
  private get apiUrl(): string {
    const { config } = this;
    return (config.api_url ?? urlOf(this.bound, config.api_listen_address, config.server_name)).replace(/\/+$/, '');
  }

  private async bindHub(store: Store): Promise<PushHub> {
    const { config } = this;
    const hub = new PushHub(
      { ...config, api_url: this.apiUrl },
      store,
      this.logger.child({ component: 'push-jobs' }),
      Date.now,
      this.cluster?.member.id,
    );
    this.hub = hub;
    try {
      await hub.bind();
    } catch (e) {
      throw new Error(
        `cannot open the push-jobs channels (ports ${config.server_heartbeat_port} and ${config.command_port}): ${messageOf(e)}`,
        { cause: e },
      );
    }
    await this.cluster?.describe(hub);
    return hub;
  }

  private async startActors(store: Store, hub: PushHub, slot: PushClusterSlot): Promise<InfraSystem> {
    const { config, cluster } = this;
    this.system = await startSystem(store, hub.parts(slot), {
      counters: this.counters,
      log: this.logger.child({ component: 'actors' }),
      feeds: { keepAliveMs: config.keep_alive_time * 1000, orgExpirationMs: config.org_feed_expiration * 1000 },
      // A member of a cluster adopts its partitions' organizations as it takes their leases, unless it holds every
      // partition to set the cluster up.
      adopt: cluster && !cluster.setsUp ? [] : this.opts.adopt,
      ...(cluster ? { cluster: cluster.systemOptions() } : {}),
    });
    return this.system;
  }

  /** A Redis restarted without its data: everything the server holds is written again before it counts as whole. */
  private writeBackOnLoss(system: InfraSystem, hub: PushHub): void {
    const { logger } = this;
    this.watched?.onLost(async () => {
      logger.warn('the store has lost its data (a Redis restarted empty?): writing back everything this server holds');
      // The leases first, with new epochs: they fence what is written back.
      await this.cluster?.member.leases.renew();
      await Promise.all([system.writeBack(), hub.writeBack()]);
      logger.info('everything this server holds is written back to the store');
    });
  }

  /** From now on the API answers: a member of a cluster what it owns, passing the rest on to the owner. */
  private serve(system: InfraSystem, hub: PushHub): void {
    const { config, cluster, watched } = this;
    const app = createApp({
      system,
      authSkewSeconds: config.auth_skew,
      push: hub,
      log: this.logger.child({ component: 'http' }),
      storeFailing: () => (watched?.failingSince ?? null) !== null,
      uiSessionSeconds: config.ui_session_timeout,
      observeRequest: this.serverMetrics?.observeRequest,
      signatures: this.signatures,
      ...(cluster ? cluster.appOptions(hub, config) : {}),
      streams: this.streams,
      budget: () => this.budget.figures(this.streams.open),
      limits: {
        jsonDepth: config.max_json_depth,
        nameLength: config.max_name_length,
        jobNodes: config.max_job_nodes,
        commandLength: config.max_command_length,
      },
    }).fetch;
    this.fetch = cluster ? cluster.forwarding(app) : app;
  }

  /** Stops whatever started, in order; once only, whether the server is closed or steps down. */
  stop(): Promise<void> {
    return (this.stopping ??= (async () => {
      this.standing.abort();
      if (this.http) await closeHttp(this.http);
      if (this.own) await closeHttp(this.own);
      this.budget.stop();
      await this.signatures.close();
      await this.metrics?.close();
      this.hub?.close();
      // Organizations are handed over first (what they accepted is stored while their leases still fence it),
      // then the system stops; it owns the store once it runs, and closes it.
      await this.cluster?.close();
      await (this.system ? this.system.stop() : this.store?.close());
    })());
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
