// The figures of a run: percentiles, the JSON object printed last with --json, and the summary for people.
import type { JobStatus } from '../push/job-states.js';
import type { VotesRecovered } from '../api/status-schema.js';
import type { Refetches } from './ipc.js';
import type { ProcessFigure } from './processes.js';

export interface Spread {
  p50: number | null;
  p99: number | null;
  max: number | null;
}

const round = (n: number, places = 1): number => Math.round(n * 10 ** places) / 10 ** places;

/** Nearest-rank percentile of `values` (any order); null when there are none. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return round(sorted[Math.min(rank, sorted.length) - 1] ?? NaN);
}

export function spread(values: readonly number[]): Spread {
  return { p50: percentile(values, 50), p99: percentile(values, 99), max: percentile(values, 100) };
}

/** The p50 of each list, under the same keys. */
export function medians<K extends string>(lists: Record<K, readonly number[]>): Record<K, number | null> {
  const out = {} as Record<K, number | null>;
  for (const k of Object.keys(lists) as K[]) out[k] = percentile(lists[k], 50);
  return out;
}

export interface Mismatch {
  job: string;
  expected: JobStatus[];
  got: JobStatus | 'unfinished' | 'not_started';
  quorum: number;
  ready_min: number;
  ready_max: number;
  nodes: Partial<Record<string, number>>;
}

export interface JobPhases {
  /** The POST sent to the first node's commit. */
  post_to_first_commit: number | null;
  /** The first node's commit to the last node's. */
  commit_fan_out: number | null;
  /** The last commit to the last ack. */
  last_commit_to_last_ack: number | null;
  /** The last ack to the first run. */
  last_ack_to_first_run: number | null;
  /** The first run to the last node's. */
  run_fan_out: number | null;
  /** The last run to the last result. */
  last_run_to_last_result: number | null;
  /** The last result to the tester's GET seeing the job over (includes up to one poll interval). */
  last_result_to_seen_finished: number | null;
}

/** The time between a rollout's waves, over every pair of waves of the run (wave-figures.ts). */
export interface BetweenWaves {
  /** From a wave's last result to the next wave's first commit, at the nodes, in ms: the pause included. */
  p50: number | null;
  max: number | null;
  /** Pairs of waves measured. */
  gaps: number;
  /** Waves the server reported complete, over every job. */
  waves_complete: number;
  /** The pause asked between waves (--pause), in seconds. */
  pause_s: number;
}

export interface Figures {
  nodes: number;
  workers: number;
  nodes_per_connection: number;
  reused_nodes: number;
  provision_s: number;
  ready_s: number;
  duration_s: number;
  jobs: number;
  jobs_by_status: Record<string, number>;
  /** Over the jobs every node of which acked, as job_phases_ms; jobs in waves are left out of both. */
  commit_to_all_acked_ms: Spread;
  post_to_running_ms: Spread;
  post_to_complete_ms: Spread;
  /** Where a job's time goes, in order (p50 of each over the jobs every node of which acked, not in waves). */
  job_phases_ms: JobPhases;
  quorum_outcomes_correct: { correct: number; total: number; ambiguous: number; mismatches: Mismatch[] };
  /** With --waves; null without. */
  between_waves_ms: BetweenWaves | null;
  offered_hb_per_s: number;
  processed_hb_per_s: number | null;
  server_hb_received_per_s: number;
  dropped: number;
  dropped_by_reason: { server: Record<string, number>; tester: Record<string, number> };
  /** Votes the server recovered meanwhile (commits lost or acks lost on the way); null when it does not say. */
  votes_recovered: VotesRecovered | null;
  offline_detect_ms: Spread & { count: number; missed: number };
  /**
   * Nodes the server marked down during the measured part, every process of a cluster together; null when it does
   * not say. Without nodes silenced on purpose (--flap, --crash-while-running), each is a down the server invented.
   */
  nodes_marked_down: number | null;
  server_pid: number | null;
  server_cpu_pct: number | null;
  server_rss_mb: number | null;
  /** Each server process known (a cluster's members, or the spawned or local server) over the measured part. */
  processes: ProcessFigure[];
  /** Redis commands during the measured part, and per node heartbeat handled; null without --redis. */
  redis_calls: number | null;
  redis_ops_per_heartbeat: number | null;
  /** Configs fetched again by nodes that heard no server for the client's silence, over the whole run. */
  config_refetches: Refetches;
  /**
   * The load tester's own worst event-loop delay while its nodes heartbeat (ms): their heartbeats and answers were
   * late by as much. Past an interval the tester, not only the server, is what the figures measure.
   */
  tester_lag_max_ms: number;
  /**
   * The tester's CPU over the measured part, itself and its workers with every thread, in % of a core: beside the
   * server's, whether the two shared more cores than the machine has.
   */
  tester_cpu_pct: number | null;
  rest_get_job_per_s: number | null;
  rest_get_job_p99_ms: number | null;
  /** Nodes the server first refused as held by another process (an earlier run's), taken over once it let go. */
  nodes_held_by_another_process: number;
  deleted_nodes: number;
  errors: string[];
}

export { round };

const show = (s: Spread): string => (s.p50 === null ? 'none' : `p50 ${s.p50}, p99 ${s.p99}, max ${s.max} ms`);
const num = (n: number | null, unit = ''): string => (n === null ? 'n/a' : `${n}${unit}`);

/**
 * Said when the tester skipped heartbeats (a node's socket was still writing its last one: the tester's own
 * machine fell behind) and nodes went down or jobs ended otherwise than expected: from the server's side such a node
 * went silent, so those figures may be the tester's doing rather than the server's.
 */
export function testerBehind(
  f: Pick<Figures, 'dropped_by_reason' | 'nodes_marked_down' | 'quorum_outcomes_correct'>,
): string | undefined {
  const skipped = f.dropped_by_reason.tester['send_skipped'] ?? 0;
  const marked = f.nodes_marked_down ?? 0;
  if (skipped === 0 || (marked === 0 && f.quorum_outcomes_correct.mismatches.length === 0)) return undefined;
  return (
    `the tester fell behind: it skipped ${skipped} heartbeats (its sockets were still writing the ones before), so ` +
    `its nodes went silent to the server; the downs and job outcomes above may be the tester's doing: play fewer ` +
    `nodes here, or the tester on cores of its own`
  );
}

function betweenWavesLine(w: BetweenWaves): string {
  const gaps = w.p50 === null ? 'none measured' : `p50 ${w.p50}, max ${w.max} ms over ${w.gaps} gaps`;
  return `between waves:      ${gaps}, pause ${w.pause_s} s included (${w.waves_complete} waves complete; a wave's last result to the next one's first commit, at the nodes)`;
}

export function summaryText(f: Figures): string {
  const q = f.quorum_outcomes_correct;
  const lines = [
    `nodes: ${f.nodes} over ${f.workers} workers${f.nodes_per_connection > 1 ? `, ${f.nodes_per_connection} a connection` : ''} (${f.reused_nodes} reused), provisioned in ${f.provision_s} s, all available ${f.ready_s} s later`,
    `jobs: ${f.jobs} (${
      Object.entries(f.jobs_by_status)
        .map(([s, n]) => `${n} ${s}`)
        .join(', ') || 'none'
    }) in ${f.duration_s} s`,
    `quorum outcomes correct: ${q.correct} of ${q.total}${q.ambiguous > 0 ? ` (${q.ambiguous} could go either way)` : ''}`,
    ...q.mismatches.map(
      (m) =>
        `  MISMATCH job ${m.job}: expected ${m.expected.join(' or ')}, server said ${m.got} (quorum ${m.quorum}, ready ${m.ready_min}..${m.ready_max}, nodes ${JSON.stringify(m.nodes)})`,
    ),
    `commit to all acked: ${show(f.commit_to_all_acked_ms)}`,
    `POST to running:     ${show(f.post_to_running_ms)}`,
    `POST to complete:    ${show(f.post_to_complete_ms)}`,
    `  of which (p50 ms): ${Object.entries(f.job_phases_ms)
      .map(([phase, ms]) => `${phase.replaceAll('_', ' ')} ${num(ms)}`)
      .join(', ')}`,
    ...(f.between_waves_ms === null ? [] : [betweenWavesLine(f.between_waves_ms)]),
    `heartbeats: ${f.offered_hb_per_s}/s offered, ${num(f.processed_hb_per_s, '/s')} processed by the server, ${f.server_hb_received_per_s}/s received from it; ${f.dropped} dropped`,
    `votes recovered by the server: ${
      f.votes_recovered === null
        ? 'n/a'
        : `${f.votes_recovered.commit_resent} commits sent again, ${f.votes_recovered.ack_from_heartbeat} acks read from heartbeats`
    }`,
    `offline detection: ${show(f.offline_detect_ms)} (${f.offline_detect_ms.count} seen, ${f.offline_detect_ms.missed} missed)`,
    `nodes marked down by the server: ${num(f.nodes_marked_down)}`,
    `server: ${num(f.server_cpu_pct, '% CPU')}, ${num(f.server_rss_mb, ' MB resident')}${f.server_pid === null ? ' (not a local process)' : ''}`,
    ...f.processes.map(
      (p) =>
        `  process ${p.pid ?? '(remote)'} at ${p.url}: ${num(p.cpu_pct, '% CPU')}, ${num(p.rss_mb, ' MB resident')} (peak ${num(p.peak_rss_mb, ' MB')}), ${num(p.heartbeats)} heartbeats, ${num(p.downs)} nodes marked down`,
    ),
    `redis: ${num(f.redis_calls)} commands, ${num(f.redis_ops_per_heartbeat)} per heartbeat`,
    `configs fetched again after silence: ${f.config_refetches.moved} moved, ${f.config_refetches.same} unchanged, ${f.config_refetches.failed} failed`,
    `load tester: ${num(f.tester_cpu_pct, '% CPU')}, worst event-loop delay ${f.tester_lag_max_ms} ms (its nodes' messages were late by as much)`,
    `signed GET of a running job: ${num(f.rest_get_job_per_s, '/s')}, p99 ${num(f.rest_get_job_p99_ms, ' ms')}`,
  ];
  if (f.nodes_held_by_another_process > 0)
    lines.push(
      `held: ${f.nodes_held_by_another_process} nodes were first refused as held by another process (an earlier run's), and played once the server let go`,
    );
  if (f.deleted_nodes > 0) lines.push(`cleanup: ${f.deleted_nodes} nodes and their clients deleted`);
  const behind = testerBehind(f);
  if (behind !== undefined) lines.push(behind);
  for (const e of f.errors) lines.push(`error: ${e}`);
  return lines.join('\n');
}
