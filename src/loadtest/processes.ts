// Figures per server process of a cluster (or the one server): which processes there are (the spawned ones, or the
// members `GET /_status` lists), their CPU seconds and resident memory read from /proc when they run here, the node
// heartbeats each handled, and Redis commands per heartbeat from two `INFO commandstats` snapshots.
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import { serverStatusSchema, type ServerStatusBody } from '../api/status-schema.js';
import { cpuSeconds, memoryMiB } from './local-server.js';

/** A server process the tester knows of: its API, and its pid when it runs on this machine (else null). */
export interface ProcessRef {
  url: string;
  pid: number | null;
}

export interface ProcessSample extends ProcessRef {
  at: number;
  cpuS: number | null;
  /** `push_jobs.heartbeats` of its `GET /_status`; null when it did not answer. */
  heartbeats: number | null;
  /** `push_jobs.lag.downs` of its `GET /_status`: the nodes it marked down so far; null when it did not answer. */
  downs: number | null;
  rssMb: number | null;
  /** The most it has been resident so far (VmHWM). */
  peakRssMb: number | null;
}

/** One process in the --json figures (`processes`). */
export interface ProcessFigure {
  url: string;
  pid: number | null;
  cpu_s: number | null;
  cpu_pct: number | null;
  rss_mb: number | null;
  peak_rss_mb: number | null;
  /** Node heartbeats it handled during the measured part. */
  heartbeats: number | null;
  /** Nodes it marked down during the measured part. */
  downs: number | null;
}

const round = (n: number, places = 1): number => Math.round(n * 10 ** places) / 10 ** places;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * The processes to measure: a cluster's members as its status lists them (a pid only for those on this host),
 * else the spawned ones, else the single server with the pid found listening on its port.
 */
export function processRefs(
  status: ServerStatusBody | null,
  spawned: readonly ProcessRef[],
  single: ProcessRef | null,
  thisHost: string = hostname(),
): ProcessRef[] {
  const members = status?.cluster?.members;
  if (members !== undefined && members.length > 0) {
    return members.map((m) => {
      const own = spawned.find((s) => s.url === m.url);
      const local = m.host === thisHost || LOOPBACK.has(new URL(m.url).hostname);
      return { url: m.url, pid: own?.pid ?? (local ? m.pid : null) };
    });
  }
  if (spawned.length > 0) return [...spawned];
  return single === null ? [] : [single];
}

/** Figures over the measured part, from a sample before and one after, matched by URL. */
export function processFigures(before: readonly ProcessSample[], after: readonly ProcessSample[]): ProcessFigure[] {
  return after.map((a) => {
    const b = before.find((x) => x.url === a.url);
    const seconds = b === undefined ? 0 : (a.at - b.at) / 1000;
    const cpu = b?.cpuS != null && a.cpuS !== null ? Math.max(0, a.cpuS - b.cpuS) : null;
    return {
      url: a.url,
      pid: a.pid,
      cpu_s: cpu === null ? null : round(cpu, 2),
      cpu_pct: cpu === null || seconds <= 0 ? null : round((100 * cpu) / seconds),
      rss_mb: a.rssMb === null ? null : round(a.rssMb),
      peak_rss_mb: a.peakRssMb === null ? null : round(a.peakRssMb),
      heartbeats: b?.heartbeats != null && a.heartbeats !== null ? Math.max(0, a.heartbeats - b.heartbeats) : null,
      downs: b?.downs != null && a.downs !== null ? Math.max(0, a.downs - b.downs) : null,
    };
  });
}

/** Calls per command from the text of `INFO commandstats` (`cmdstat_get:calls=12,usec=...`). */
export function commandCalls(info: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[m[1] as string] = Number(m[2]);
  return out;
}

/**
 * Redis commands per node heartbeat between two snapshots: every command's calls, the INFO that took the first
 * snapshot included (one call, nothing against thousands of heartbeats). Null without heartbeats or snapshots.
 */
export function redisOpsPerHeartbeat(
  before: Record<string, number> | null,
  after: Record<string, number> | null,
  heartbeats: number | null,
): { calls: number | null; perHeartbeat: number | null } {
  if (before === null || after === null) return { calls: null, perHeartbeat: null };
  let calls = 0;
  for (const [command, n] of Object.entries(after)) calls += Math.max(0, n - (before[command] ?? 0));
  return { calls, perHeartbeat: heartbeats === null || heartbeats <= 0 ? null : round(calls / heartbeats, 3) };
}

/** `INFO commandstats` of the Redis at `url`, as calls per command; null when it does not answer. */
export async function commandstats(url: string): Promise<Record<string, number> | null> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return commandCalls(await redis.info('commandstats'));
  } catch {
    return null;
  } finally {
    redis.disconnect();
  }
}

/** The heartbeats a process handled and the nodes it marked down so far, from its `GET /_status`. */
async function pushCountsOf(url: string): Promise<{ heartbeats: number | null; downs: number | null }> {
  try {
    const res = await fetch(new URL('/_status', url), { signal: AbortSignal.timeout(10_000) });
    const parsed = serverStatusSchema.safeParse(await res.json());
    const push = parsed.success ? parsed.data.push_jobs : undefined;
    return { heartbeats: push?.heartbeats ?? null, downs: push?.lag?.downs ?? null };
  } catch {
    return { heartbeats: null, downs: null };
  }
}

/** One sample of each process, all at once. */
export function sampleProcesses(refs: readonly ProcessRef[], now: () => number): Promise<ProcessSample[]> {
  return Promise.all(
    refs.map(async (ref) => {
      const at = now();
      const [cpuS, counts, memory] = await Promise.all([
        ref.pid === null ? null : cpuSeconds(ref.pid).catch(() => null),
        pushCountsOf(ref.url),
        ref.pid === null ? null : memoryMiB(ref.pid).catch(() => null),
      ]);
      return { ...ref, at, cpuS, ...counts, rssMb: memory?.rss ?? null, peakRssMb: memory?.peak ?? null };
    }),
  );
}
