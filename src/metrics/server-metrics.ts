// The server's Prometheus metrics (GET /metrics on the metrics listener). What the server already counts is read
// when Prometheus scrapes (scraped-metrics.ts), so the heartbeat path pays nothing; requests and store writes are
// observed here as they end, jobs through their feed (job-metrics.ts).
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { JobMetrics } from './job-metrics.js';
import { registerScrapedMetrics, type MetricSources } from './scraped-metrics.js';

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
    registerScrapedMetrics(this.registry, sources);

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
