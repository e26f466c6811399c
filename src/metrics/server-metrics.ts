// The server's Prometheus metrics (GET /metrics on the metrics listener). What the server already counts (the
// transport's heartbeats and drops, node availability, actor crashes) is read when Prometheus scrapes, so the
// heartbeat path pays nothing; requests and store writes are observed as they end, jobs through their feed.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LimitsStatus, ServerStatusBody } from '../api/status-schema.js';
import type { Counters } from '../lib/counters.js';
import { JobMetrics } from './job-metrics.js';

export type PushFigures = NonNullable<ServerStatusBody['push_jobs']>;

export interface NodeCount {
  org: string;
  status: string;
  availability: string;
  nodes: number;
}

/** Where the figures read at scrape time come from; each answers nothing until its part of the server runs. */
export interface MetricSources {
  nodeCounts(): Iterable<NodeCount>;
  push(): PushFigures | undefined;
  /** `actor_crashes` by actor kind. */
  counters: Counters;
  /** Whether store operations fail now (GET /_status says `degraded`). */
  storeFailing(): boolean;
  /** The open-file budget and the API's refusals (GET /_status `limits`). */
  limits?(): LimitsStatus | undefined;
}

/** From a cached read to a slow signed search. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** From a write to memory (the file store's rename) to store_timeout's most. */
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class ServerMetrics {
  readonly registry = new Registry();
  readonly jobs: JobMetrics;
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly requestSeconds: Histogram<'method' | 'route'>;
  private readonly storeWriteSeconds: Histogram<'operation'>;
  private readonly storeWriteFailures: Counter<'operation' | 'reason'>;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    // process_* and nodejs_* under their usual names, so existing Node.js dashboards read them too.
    collectDefaultMetrics({ register: this.registry });
    this.jobs = new JobMetrics(this.registry);

    new Gauge({
      name: 'infra_nodes',
      help: 'Nodes of each organization by status (up, down) and availability, as GET .../pushy/node_states shows them.',
      labelNames: ['org', 'status', 'availability'],
      registers,
      collect() {
        this.reset();
        for (const { org, status, availability, nodes } of sources.nodeCounts())
          this.set({ org, status, availability }, nodes);
      },
    });
    new Gauge({
      name: 'infra_push_connected_nodes',
      help: 'Nodes heard within the offline window, to which the server sends heartbeats.',
      registers,
      collect() {
        this.set(sources.push()?.connected_nodes ?? 0);
      },
    });
    counterOf(
      registers,
      'infra_heartbeats_accepted_total',
      'Node heartbeats verified and handed to their node.',
      () => [[{}, sources.push()?.heartbeats ?? 0]],
    );
    counterOf(
      registers,
      'infra_push_messages_accepted_total',
      'Push-jobs messages (heartbeats and job answers) verified and handed to their node.',
      () => [[{}, sources.push()?.accepted ?? 0]],
    );
    counterOf(
      registers,
      'infra_push_votes_recovered_total',
      'Votes lost on the way and recovered, by how: commit_resent (the node never got the commit) or ack_from_heartbeat (its ack was lost; its heartbeat says it holds the job).',
      () => Object.entries(sources.push()?.votes_recovered ?? {}).map(([how, n]) => [{ how }, n]),
      ['how'],
    );
    new Gauge({
      name: 'infra_push_lag_seconds',
      help: 'How far behind the server reads node heartbeats (queued unread, or its event loop held up): the largest lag within the last offline window, by which silence may exceed the window before a node is down.',
      registers,
      collect() {
        this.set((sources.push()?.lag?.current_ms ?? 0) / 1000);
      },
    });
    new Gauge({
      name: 'infra_push_lag_max_seconds',
      help: 'The largest lag behind node heartbeats seen since the server started.',
      registers,
      collect() {
        this.set((sources.push()?.lag?.max_ms ?? 0) / 1000);
      },
    });
    counterOf(
      registers,
      'infra_push_downs_total',
      'Nodes marked down: silent past the offline window and the lag behind their heartbeats.',
      () => [[{}, sources.push()?.lag?.downs ?? 0]],
    );
    counterOf(
      registers,
      'infra_push_downs_deferred_total',
      'Nodes kept up past the offline window because the server lagged behind their heartbeats (once per silence).',
      () => [[{}, sources.push()?.lag?.downs_deferred ?? 0]],
    );
    counterOf(
      registers,
      'infra_push_messages_dropped_total',
      'Push-jobs messages dropped on either channel before reaching a node, by reason (bad_signature, replay, ...).',
      () => Object.entries(sources.push()?.dropped ?? {}).map(([reason, n]) => [{ reason }, n]),
      ['reason'],
    );
    counterOf(
      registers,
      'infra_push_connections_refused_total',
      'ZeroMQ connections refused in their handshake, by reason (curve_key_unknown, handshake_timeout, ...).',
      () => Object.entries(sources.push()?.connections?.refused ?? {}).map(([reason, n]) => [{ reason }, n]),
      ['reason'],
    );
    counterOf(
      registers,
      'infra_push_connections_closed_total',
      'ZeroMQ connections closed after their handshake: peers gone, silent, or past the message size limit.',
      () => [[{}, sources.push()?.connections?.closed_after_handshake ?? 0]],
    );
    counterOf(
      registers,
      'infra_http_refused_total',
      'API connections and streams refused or closed, by the setting that did it (max_event_streams, ...).',
      () => Object.entries(sources.limits?.()?.http.refused ?? {}).map(([reason, n]) => [{ reason }, n]),
      ['reason'],
    );
    new Gauge({
      name: 'infra_open_files',
      help: 'Files the process holds open (node connections, API connections, feeds, the store).',
      registers,
      collect() {
        this.set(sources.limits?.()?.files.open ?? 0);
      },
    });
    new Gauge({
      name: 'infra_open_files_limit',
      help: "The process's open-file limit (its soft RLIMIT_NOFILE).",
      registers,
      collect() {
        this.set(sources.limits?.()?.files.limit ?? 0);
      },
    });
    counterOf(
      registers,
      'infra_actor_crashes_total',
      'Actor crashes handled by their crash policy, by actor kind (job, node, org, users, root).',
      () => Object.entries(sources.counters.snapshot('actor_crashes')).map(([actor, n]) => [{ actor }, n]),
      ['actor'],
    );
    new Gauge({
      name: 'infra_store_degraded',
      help: '1 while store operations fail (writes are refused with 503 and GET /_status says degraded), else 0.',
      registers,
      collect() {
        this.set(sources.storeFailing() ? 1 : 0);
      },
    });

    this.requests = new Counter({
      name: 'infra_http_requests_total',
      help: 'API requests by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'infra_http_request_duration_seconds',
      help: 'Time from an API request arriving to its answer, by method and route pattern.',
      labelNames: ['method', 'route'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.storeWriteSeconds = new Histogram({
      name: 'infra_store_write_duration_seconds',
      help: 'Time a store write took, failed ones included, by store operation.',
      labelNames: ['operation'],
      buckets: STORE_BUCKETS,
      registers,
    });
    this.storeWriteFailures = new Counter({
      name: 'infra_store_write_failures_total',
      help: 'Store writes that failed, by store operation and reason (timeout: past store_timeout; error).',
      labelNames: ['operation', 'reason'],
      registers,
    });
  }

  readonly observeRequest = (method: string, route: string, status: number, seconds: number): void => {
    this.requests.inc({ method, route, status: String(status) });
    this.requestSeconds.observe({ method, route }, seconds);
  };

  readonly observeStoreWrite = (operation: string, seconds: number, failure: 'timeout' | 'error' | null): void => {
    this.storeWriteSeconds.observe({ operation }, seconds);
    if (failure !== null) this.storeWriteFailures.inc({ operation, reason: failure });
  };
}

/** A counter whose values are read from counts kept elsewhere, when scraped. */
function counterOf<L extends string>(
  registers: Registry[],
  name: string,
  help: string,
  read: () => Array<[Partial<Record<L, string>>, number]>,
  labelNames: L[] = [],
): void {
  new Counter<L>({
    name,
    help,
    labelNames,
    registers,
    collect() {
      this.reset();
      for (const [labels, n] of read()) this.inc(labels, n);
    },
  });
}
