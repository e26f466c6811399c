// The two ends of the measured window: what the server (the process behind its URL, its status counts, each of its
// processes), its Redis and the tester itself had counted when the window opened and when it closed. The figures
// are their differences over the window's length.
import type { ServerStatusBody } from '../api/status-schema.js';
import { delay, type Timers } from '../lib/timers.js';
import { testerTimers } from './clock.js';
import type { Fleet, FleetTotals } from './fleet.js';
import { cpuSeconds, rssMiB } from './local-server.js';
import type { LoadOptions } from './options.js';
import { commandstats, processRefs, sampleProcesses, type ProcessRef, type ProcessSample } from './processes.js';
import type { StopSignal } from './scenario.js';
import { serverStatus, type ServerUnderLoad } from './server-under-load.js';

/** At most this long past the scenario, the measured window waits for every node's heartbeat. */
const WINDOW_STRETCH_MAX_MS = 10_000;
/** How often the stretched window looks at the fleet's heartbeats. */
const STRETCH_POLL_MS = 50;

/** What one end of the window read. */
interface WindowEnd {
  at: number;
  /** CPU seconds so far of the process behind the server's URL; null when it does not run here. */
  cpu: number | null;
  /** CPU seconds so far of the tester, its workers included. */
  testerCpu: number | null;
  status: ServerStatusBody | null;
  /** Each server process measured. */
  processes: ProcessSample[];
  /** Calls per Redis command so far; null without --redis. */
  redis: Record<string, number> | null;
}

export interface WindowOpened extends WindowEnd {
  /** The fleet's totals as they were. */
  fleet: FleetTotals;
  /** The server processes measured: a cluster's members, else the spawned ones or the one server. */
  refs: ProcessRef[];
}

export interface WindowClosed extends WindowEnd {
  /** Resident memory of the process behind the server's URL; null when it does not run here. */
  rssMb: number | null;
}

async function cpuAndTime(pid: number | null, timers: Timers): Promise<{ cpu: number | null; at: number }> {
  return { cpu: pid === null ? null : await cpuSeconds(pid).catch(() => null), at: timers.now() };
}

/** The CPU seconds of the tester so far: this process and its workers, every thread (their ZeroMQ ones too). */
async function testerCpuSeconds(fleet: Fleet): Promise<number | null> {
  const all = await Promise.all([process.pid, ...fleet.pids()].map((p) => cpuSeconds(p).catch(() => null)));
  return all.some((s) => s === null) ? null : all.reduce<number>((n, s) => n + (s ?? 0), 0);
}

export async function openWindow(
  o: LoadOptions,
  server: ServerUnderLoad,
  fleet: Fleet,
  timers: Timers = testerTimers,
): Promise<WindowOpened> {
  const { cpu, at } = await cpuAndTime(server.pid, timers);
  const testerCpu = await testerCpuSeconds(fleet);
  const totals = { ...fleet.totals, drops: { ...fleet.totals.drops } };
  const status = await serverStatus(server.api);
  const single = server.pid === null ? null : { url: server.baseUrl, pid: server.pid };
  const refs = processRefs(status, server.spawnedRefs, single);
  const [processes, redis] = await Promise.all([
    sampleProcesses(refs, () => timers.now()),
    o.redis === null ? null : commandstats(o.redis),
  ]);
  return { at, cpu, testerCpu, status, processes, redis, fleet: totals, refs };
}

/**
 * Nodes beat once an interval, all in one slot per worker: a run shorter than that could measure no heartbeat
 * at all. The window is stretched until every node has beaten in it (the rates divide by its length), then read.
 */
export async function closeWindow(
  o: LoadOptions,
  server: ServerUnderLoad,
  fleet: Fleet,
  opened: WindowOpened,
  stop: StopSignal,
  timers: Timers = testerTimers,
): Promise<WindowClosed> {
  const stretchUntil = timers.now() + WINDOW_STRETCH_MAX_MS;
  const short = () => fleet.totals.heartbeatsSent - opened.fleet.heartbeatsSent < o.nodes;
  while (short() && !stop.over && timers.now() < stretchUntil) await delay(timers, STRETCH_POLL_MS);
  const { cpu, at } = await cpuAndTime(server.pid, timers);
  const testerCpu = await testerCpuSeconds(fleet);
  const [processes, redis] = await Promise.all([
    sampleProcesses(opened.refs, () => timers.now()),
    o.redis === null ? null : commandstats(o.redis),
  ]);
  const status = await serverStatus(server.api);
  const rssMb = server.pid === null ? null : await rssMiB(server.pid).catch(() => null);
  return { at, cpu, testerCpu, status, processes, redis, rssMb };
}
