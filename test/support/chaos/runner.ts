// The chaos runner: rounds of a long job over every node, the round's fault struck during it and healed after its
// duration, and a short job started as soon as the long one ended; the sampler runs throughout. At the end every
// client's log is read into its node's record and the checker judges the whole history.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ALL_PARTITIONS } from '../../../src/store/partitions.js';
import type { TeardownScope } from '../teardown-scope.js';
import { checkHistory, defaultBounds, type Bounds, type Notes, type Violation } from './checker.js';
import { startClusterUnderTest, type ClusterUnderTest } from './cluster-under-test.js';
import { HistoryRecorder, jobDeadline, type History, type RedisKind, type Submission } from './history.js';
import { entries, followJob, submitJob, type Entry } from './jobs.js';
import { describeFault, planFaults, type Fault, type FaultKind, type MsRange } from './nemesis.js';
import { roundsTable, violationsText, type RoundResult } from './report.js';
import { startSampler } from './sampler.js';

export interface JobSettings {
  commandLine: string;
  runTimeoutS: number;
  /** Short, so that a job no fault kept from voting fails fast, and the deadline stays tight. */
  votingTimeoutS: number;
}

export interface ChaosOptions {
  seed: number;
  rounds: number;
  members: number;
  nodes: number;
  redis: RedisKind;
  balancer: boolean;
  kinds: readonly FaultKind[];
  durations?: Partial<Record<FaultKind, MsRange>>;
  offset?: MsRange;
  leaseTtlS: number;
  heartbeatMs: number;
  /** The long job's command line (whitelisted as `long`) and its timeouts; the short job's (as `short`). */
  long: JobSettings;
  short: JobSettings;
  /** Simulated nodes (infra-loadtest) instead of real clients: `nodes` of them, each command running `runMs`. */
  simulated?: { runMs: number };
  /** The members' and the clients' log level (info by default). */
  logLevel?: 'debug' | 'info';
  /** The run's folder; the history is written there as history.json, with the members' logs. */
  dir: string;
  log(line: string): void;
}

export interface ChaosResult {
  history: History;
  bounds: Bounds;
  rounds: RoundResult[];
  violations: Violation[];
  notes: Notes;
  /** The per-round table, the violations and the notes, as printed. */
  report: string;
}

/** As users run a cluster: the server's own default (offline_threshold 3). */
const OFFLINE_THRESHOLD = 3;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export async function runChaos(scope: TeardownScope, o: ChaosOptions): Promise<ChaosResult> {
  const plan = planFaults({
    seed: o.seed,
    rounds: o.rounds,
    kinds: o.kinds,
    members: o.members,
    durations: o.durations,
    offset: o.offset,
  });
  o.log(
    `chaos seed ${o.seed}: ${o.rounds} rounds of ${o.kinds.join(', ')}; ${o.members} members, ${o.nodes} nodes, Redis ${o.redis}, ${o.balancer ? 'balancer' : 'no balancer'}${o.simulated ? ' (simulated nodes)' : ''}`,
  );
  const c = await startClusterUnderTest(scope, {
    dir: o.dir,
    members: o.members,
    nodes: o.nodes,
    redis: o.redis,
    balancer: o.balancer,
    leaseTtlS: o.leaseTtlS,
    heartbeatMs: o.heartbeatMs,
    whitelist: { long: o.long.commandLine, short: o.short.commandLine },
    ...(o.simulated ? { simulated: o.simulated } : {}),
    ...(o.logLevel === undefined ? {} : { logLevel: o.logLevel }),
  });
  for (const f of plan)
    if (!['kill', 'pause', ...c.redis.kinds].includes(f.kind))
      throw new Error(`a ${f.kind} needs another Redis than ${o.redis} (which takes ${c.redis.kinds.join(', ')})`);
  const names = c.nodes.names;
  const history = new HistoryRecorder(
    {
      seed: o.seed,
      rounds: o.rounds,
      members: o.members,
      nodes: names,
      redis: o.redis,
      balancer: o.balancer,
      leaseTtlMs: o.leaseTtlS * 1000,
      heartbeatMs: o.heartbeatMs,
      offlineThreshold: OFFLINE_THRESHOLD,
      partitions: ALL_PARTITIONS.map((p) => (p === 'global' ? 'global' : `p${p}`)),
      memberPorts: c.members.map((m) => m.server.ports),
    },
    plan,
    Date.now(),
  );
  const bounds = defaultBounds(history.view().settings, plan);
  const sampler = startSampler(c, history);
  const entry = entries(c);
  const rounds: RoundResult[] = [];
  try {
    for (const fault of plan) {
      await settle(c, history, names, bounds.nodeBackMs + 10_000);
      const round = await runRound(c, history, entry, o, bounds, fault, names);
      rounds.push(round);
      o.log(
        `round ${fault.round + 1}/${o.rounds}: ${describeFault(fault)}: long ${round.long.view?.last?.status ?? 'no job'}, short ${round.short.view?.last?.status ?? 'no job'}`,
      );
    }
    // The last healing gets its bound to be judged in, and every job its own to end in.
    const lastEnd = Math.max(0, ...history.view().faults.map((e) => e.at));
    await settle(c, history, names, Math.max(0, lastEnd + bounds.nodeBackMs + 1000 - Date.now()));
    await pause(lastEnd + bounds.nodeBackMs + 1000 - Date.now());
    for (const s of history.view().submissions)
      if (s.id !== null) await followJob(entry, history, s.id, jobDeadline(s, bounds.failoverMs));
  } finally {
    await sampler.stop();
  }
  const done = history.finish(await c.nodes.records(), Date.now());
  await c.saveOutputs();
  await writeFile(join(o.dir, 'history.json'), JSON.stringify(done));
  const { violations, notes } = checkHistory(done, bounds);
  const report = [
    `seed ${o.seed}`,
    roundsTable(rounds),
    violationsText(violations, notes, bounds),
    `seed ${o.seed} (the same seed replays the same faults)`,
  ].join('\n\n');
  return { history: done, bounds, rounds, violations, notes, report };
}

async function runRound(
  c: ClusterUnderTest,
  history: HistoryRecorder,
  entry: () => Promise<Entry>,
  o: ChaosOptions,
  bounds: Bounds,
  fault: Fault,
  names: string[],
): Promise<RoundResult> {
  const round = fault.round;
  const long = await submitJob(entry, history, {
    round,
    role: 'long',
    command: 'long',
    nodes: names,
    runTimeoutS: o.long.runTimeoutS,
    votingTimeoutS: o.long.votingTimeoutS,
  });
  await pause(long.at + fault.offsetMs - Date.now());
  let hit: string;
  let struck = Date.now();
  let member: number | null = null;
  try {
    const done = await c.apply(fault);
    struck = done.at;
    hit = done.detail;
    member = done.member ?? null;
    history.fault({
      at: done.at,
      phase: 'start',
      fault,
      member,
      detail: done.detail,
      ...(done.backAt ? { redisBackAt: done.backAt } : {}),
    });
  } catch (e) {
    hit = `could not be applied: ${e instanceof Error ? e.message : String(e)}`;
    history.fault({ at: struck, phase: 'start', fault, member, detail: hit, error: hit });
  }
  await pause(struck + fault.durationMs - Date.now());
  try {
    const detail = await c.heal(fault);
    history.fault({ at: Date.now(), phase: 'end', fault, member, detail });
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    history.fault({ at: Date.now(), phase: 'end', fault, member, detail: 'could not be healed', error });
  }
  const bound = (s: Submission) => jobDeadline(s, bounds.failoverMs);
  const longView = long.id === null ? undefined : await followJob(entry, history, long.id, bound(long));
  // Right after the recovery: the job a user would start once the cluster answers again.
  const short = await submitJob(entry, history, {
    round,
    role: 'short',
    command: 'short',
    nodes: names,
    runTimeoutS: o.short.runTimeoutS,
    votingTimeoutS: o.short.votingTimeoutS,
  });
  const shortView = short.id === null ? undefined : await followJob(entry, history, short.id, bound(short));
  return { fault, hit, long: { submission: long, view: longView }, short: { submission: short, view: shortView } };
}

/** Waits (at most `forMs`) for every member to answer and every node to be available, as the samples show. */
async function settle(c: ClusterUnderTest, history: HistoryRecorder, names: string[], forMs: number): Promise<void> {
  const deadline = Date.now() + forMs;
  while (Date.now() < deadline) {
    const s = history.lastSample();
    const members = s?.members.every((m) => m.answered) ?? false;
    const nodes = names.every((n) => s?.nodes?.[n]?.availability === 'available');
    if (members && nodes && c.members.every((m) => m.state === 'up')) return;
    await pause(250);
  }
}
