// The metrics of what the server already counts (the transport's heartbeats, drops and lag, node availability, its
// limits, actor crashes, the store's health), read from their sources when Prometheus scrapes, so the heartbeat
// path pays nothing. Each group is registered by a function of its own, in the order /metrics lists them.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { LimitsStatus, ServerStatusBody } from '../api/status-schema.js';
import type { Counters } from '../lib/counters.js';

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

export function registerScrapedMetrics(registry: Registry, sources: MetricSources): void {
  const registers = [registry];
  registerNodeMetrics(registers, sources);
  registerMessageMetrics(registers, sources);
  registerLagMetrics(registers, sources);
  registerConnectionMetrics(registers, sources);
  registerLimitMetrics(registers, sources);
  registerHealthMetrics(registers, sources);
}

/** The nodes by status and availability, and those the server sends heartbeats to. */
function registerNodeMetrics(registers: Registry[], sources: MetricSources): void {
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
  gaugeOf(
    registers,
    'infra_push_connected_nodes',
    'Nodes heard within the offline window, to which the server sends heartbeats.',
    () => sources.push()?.connected_nodes ?? 0,
  );
}

/** The nodes' messages handed on, and the votes recovered after they were lost on the way. */
function registerMessageMetrics(registers: Registry[], sources: MetricSources): void {
  counterOf(registers, 'infra_heartbeats_accepted_total', 'Node heartbeats verified and handed to their node.', () => [
    [{}, sources.push()?.heartbeats ?? 0],
  ]);
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
}

/** How far behind the server reads heartbeats, and the downs that lag decided. */
function registerLagMetrics(registers: Registry[], sources: MetricSources): void {
  gaugeOf(
    registers,
    'infra_push_lag_seconds',
    'How far behind the server reads node heartbeats (queued unread, or its event loop held up): the largest lag within the last offline window, by which silence may exceed the window before a node is down.',
    () => (sources.push()?.lag?.current_ms ?? 0) / 1000,
  );
  gaugeOf(
    registers,
    'infra_push_lag_max_seconds',
    'The largest lag behind node heartbeats seen since the server started.',
    () => (sources.push()?.lag?.max_ms ?? 0) / 1000,
  );
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
}

/** Messages dropped before reaching a node, and the ZeroMQ connections refused or closed. */
function registerConnectionMetrics(registers: Registry[], sources: MetricSources): void {
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
}

/** The API's refusals by the setting that made them, and the open-file budget. */
function registerLimitMetrics(registers: Registry[], sources: MetricSources): void {
  counterOf(
    registers,
    'infra_http_refused_total',
    'API connections and streams refused or closed, by the setting that did it (max_event_streams, ...).',
    () => Object.entries(sources.limits?.()?.http.refused ?? {}).map(([reason, n]) => [{ reason }, n]),
    ['reason'],
  );
  gaugeOf(
    registers,
    'infra_open_files',
    'Files the process holds open (node connections, API connections, feeds, the store).',
    () => sources.limits?.()?.files.open ?? 0,
  );
  gaugeOf(
    registers,
    'infra_open_files_limit',
    "The process's open-file limit (its soft RLIMIT_NOFILE).",
    () => sources.limits?.()?.files.limit ?? 0,
  );
}

/** Actor crashes by kind, schedules' firings, and whether the store fails now. */
function registerHealthMetrics(registers: Registry[], sources: MetricSources): void {
  counterOf(
    registers,
    'infra_actor_crashes_total',
    'Actor crashes handled by their crash policy, by actor kind (job, node, org, users, root).',
    () => Object.entries(sources.counters.snapshot('actor_crashes')).map(([actor, n]) => [{ actor }, n]),
    ['actor'],
  );
  counterOf(
    registers,
    'infra_schedule_firings_total',
    "Schedules' occurrences by outcome: fired (a job started), skipped_overlap (the job before still ran), missed (no process served the organization then, or later than schedule_catchup).",
    () => Object.entries(sources.counters.snapshot('schedule_firings')).map(([outcome, n]) => [{ outcome }, n]),
    ['outcome'],
  );
  gaugeOf(
    registers,
    'infra_store_degraded',
    '1 while store operations fail (writes are refused with 503 and GET /_status says degraded), else 0.',
    () => (sources.storeFailing() ? 1 : 0),
  );
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

/** A gauge without labels whose value is read when scraped. */
function gaugeOf(registers: Registry[], name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers,
    collect() {
      this.set(read());
    },
  });
}
