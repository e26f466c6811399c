// The figures of a whole run (figures.ts has their shape and the summary): the jobs' own (job-figures.ts), and
// rates, drops, CPU and memory, Redis calls and downs over the measured window, from what its two ends read.
import type { ServerStatusBody, VotesRecovered } from '../api/status-schema.js';
import { percentile, round, spread, type Figures } from './figures.js';
import type { Fleet } from './fleet.js';
import { jobFigures } from './job-figures.js';
import type { Measured } from './measured-run.js';
import type { LoadOptions } from './options.js';
import { processFigures, redisOpsPerHeartbeat, type ProcessFigure } from './processes.js';
import type { OfflineDetector } from './scenario.js';
import { betweenWaves } from './wave-figures.js';

export interface FigureInputs {
  o: LoadOptions;
  fleet: Fleet;
  measured: Measured;
  detector: OfflineDetector;
  /** The process behind the server's URL when it runs here. */
  pid: number | null;
  provisionS: number;
  readyS: number;
  deleted: number;
  errors: string[];
}

type PushCounts = ServerStatusBody['push_jobs'] | undefined;

const sum = (r: Record<string, number> | undefined): number => Object.values(r ?? {}).reduce((a, b) => a + b, 0);

function minus(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) if (v - (before[k] ?? 0) > 0) out[k] = v - (before[k] ?? 0);
  return out;
}

/** Every process's own count where any gives one, else the one server's from its status at both ends. */
function summed(processes: readonly ProcessFigure[], key: 'heartbeats' | 'downs', single: number | null) {
  const counted = processes.filter((p) => p[key] !== null);
  return counted.length > 0 ? counted.reduce((n, p) => n + (p[key] ?? 0), 0) : single;
}

function votesRecovered(sb: PushCounts, sa: PushCounts): VotesRecovered | null {
  return sa?.votes_recovered && sb?.votes_recovered
    ? {
        commit_resent: sa.votes_recovered.commit_resent - sb.votes_recovered.commit_resent,
        ack_from_heartbeat: sa.votes_recovered.ack_from_heartbeat - sb.votes_recovered.ack_from_heartbeat,
      }
    : null;
}

/** A cluster's processes together (each is listed under `processes`), else the one server's. */
function serverCpuPct(processes: readonly ProcessFigure[], cpu: number | null, seconds: number): number | null {
  if (processes.length > 1) return round(processes.reduce((n, p) => n + (p.cpu_pct ?? 0), 0));
  return cpu === null ? null : round((100 * cpu) / Math.max(seconds, 0.001));
}

export function figuresOf(x: FigureInputs): Figures {
  const { o, fleet } = x;
  const { opened, closed, records, rest } = x.measured;
  const seconds = (closed.at - opened.at) / 1000;
  const cpu = opened.cpu === null || closed.cpu === null ? null : closed.cpu - opened.cpu;
  const testerCpu = opened.testerCpu === null || closed.testerCpu === null ? null : closed.testerCpu - opened.testerCpu;
  const sb = opened.status?.push_jobs;
  const sa = closed.status?.push_jobs;
  const serverDrops = sa != null && sb != null ? minus(sa.dropped, sb.dropped) : {};
  const testerDrops = minus(fleet.totals.drops, opened.fleet.drops);
  const perSecond = (n: number) => round(n / Math.max(seconds, 0.001));
  const busy = Math.max(0, ...rest.busyMs);
  const processes = processFigures(opened.processes, closed.processes);
  // Heartbeats for the Redis ratio: every process's own count, else the one server's.
  const heartbeats = summed(processes, 'heartbeats', sa != null && sb != null ? sa.heartbeats - sb.heartbeats : null);
  const redis = redisOpsPerHeartbeat(opened.redis, closed.redis, heartbeats);
  const serverDowns = sa?.lag !== undefined && sb?.lag !== undefined ? sa.lag.downs - sb.lag.downs : null;
  const downs = summed(processes, 'downs', serverDowns);
  const jobs = jobFigures(records, fleet.tallies);
  return {
    nodes: o.nodes,
    workers: o.workers,
    nodes_per_connection: o.nodesPerConnection,
    reused_nodes: fleet.reused,
    provision_s: x.provisionS,
    ready_s: x.readyS,
    duration_s: round(seconds),
    jobs: records.length,
    jobs_by_status: jobs.jobs_by_status,
    commit_to_all_acked_ms: jobs.commit_to_all_acked_ms,
    post_to_running_ms: jobs.post_to_running_ms,
    post_to_complete_ms: jobs.post_to_complete_ms,
    job_phases_ms: jobs.job_phases_ms,
    quorum_outcomes_correct: jobs.quorum_outcomes_correct,
    between_waves_ms: betweenWaves(records, fleet.tallies, o.rollout),
    offered_hb_per_s: perSecond(fleet.totals.heartbeatsSent - opened.fleet.heartbeatsSent),
    // Every process's heartbeats: a cluster's nodes are spread over their gateways.
    processed_hb_per_s: heartbeats === null ? null : perSecond(heartbeats),
    server_hb_received_per_s: perSecond(fleet.totals.serverHeartbeats - opened.fleet.serverHeartbeats),
    dropped: sum(serverDrops) + sum(testerDrops),
    dropped_by_reason: { server: serverDrops, tester: testerDrops },
    votes_recovered: votesRecovered(sb, sa),
    offline_detect_ms: {
      ...spread(x.detector.detectedMs),
      count: x.detector.detectedMs.length,
      missed: x.detector.missed,
    },
    nodes_marked_down: downs,
    server_pid: x.pid,
    server_cpu_pct: serverCpuPct(processes, cpu, seconds),
    server_rss_mb: closed.rssMb === null ? null : round(closed.rssMb),
    processes,
    redis_calls: redis.calls,
    redis_ops_per_heartbeat: redis.perHeartbeat,
    config_refetches: { ...fleet.totals.refetches },
    tester_cpu_pct: testerCpu === null ? null : round((100 * testerCpu) / Math.max(seconds, 0.001)),
    tester_lag_max_ms: fleet.totals.lagMaxMs,
    rest_get_job_per_s: rest.gets === 0 ? null : round((rest.gets * 1000) / Math.max(busy, 1)),
    rest_get_job_p99_ms: percentile(rest.latenciesMs, 99),
    nodes_held_by_another_process: fleet.totals.held,
    deleted_nodes: x.deleted,
    errors: x.errors,
  };
}
