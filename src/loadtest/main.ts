// infra-loadtest from checked options to figures: the server (given or spawned), the fleet of simulated nodes
// in worker processes, the measured scenario, the figures, and cleaning up. Exit 0 when every job ended as
// expected, 1 otherwise or when the run could not be completed.
import { createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ApiClient } from '../auth/api-client.js';
import { generateKeyPair, readPrivateKey, type GeneratedKeyPair } from '../auth/rsa-keys.js';
import { writeKeyFile } from '../client/registration.js';
import { nodeStateListSchema } from '../api/push-jobs.js';
import type { JobStatus } from '../push/job-states.js';
import { serverStatusSchema, type ServerStatusBody } from '../api/status-schema.js';
import { fitLine } from '../cli/progress.js';
import { messageOf } from '../lib/thrown.js';
import { assignBehaviours } from './behaviour.js';
import { Fleet, type FleetTotals } from './fleet.js';
import type { Figures, JobPhases, Mismatch } from './figures.js';
import { medians, percentile, round, spread, summaryText } from './figures.js';
import type { WorkerInit } from './ipc.js';
import { cpuSeconds, findListeningPid, rssMiB, spawnServer, type SpawnedServer } from './local-server.js';
import {
  commandstats,
  processFigures,
  processRefs,
  redisOpsPerHeartbeat,
  sampleProcesses,
  type ProcessRef,
  type ProcessSample,
} from './processes.js';
import type { LoadOptions } from './options.js';
import { CompletionFeed } from './completions.js';
import { call, OfflineDetector, restLoop, runJobs, StopSignal, type JobRecord, type RestFigures } from './scenario.js';
import { now } from './sim-node.js';

export interface Streams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

const READY_POLL_MS = 500;
/** Beyond --timeout, the run is ended by force (a hung server or worker). */
const WATCHDOG_GRACE_MS = 60_000;
/** At most this long past the scenario, the measured window waits for every node's heartbeat. */
const WINDOW_STRETCH_MAX_MS = 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Off a terminal, the live line is written out this often. */
const LOG_PROGRESS_MS = 10_000;

class Progress {
  private line = '';
  private timer: NodeJS.Timeout | undefined;
  private loggedAt = now();
  constructor(private readonly err: Streams['stderr']) {
    if (err.isTTY === true) this.timer = setInterval(() => this.draw(), 250);
  }
  /** The live line: redrawn on a terminal, else written every LOG_PROGRESS_MS. */
  set(text: string): void {
    this.line = text;
    if (this.err.isTTY !== true && now() - this.loggedAt >= LOG_PROGRESS_MS) {
      this.loggedAt = now();
      this.err.write(`infra-loadtest: ${text}\n`);
    }
  }
  /** A phase worth a line of its own. */
  say(text: string): void {
    if (this.err.isTTY === true) this.err.write(`\r\x1b[K`);
    this.err.write(`infra-loadtest: ${text}\n`);
  }
  end(): void {
    clearInterval(this.timer);
    if (this.err.isTTY === true) this.err.write('\r\x1b[K');
  }
  private draw(): void {
    if (this.line !== '') this.err.write(`\r${fitLine(this.line, this.err.columns)}\x1b[K`);
  }
}

async function serverStatus(api: ApiClient): Promise<ServerStatusBody | null> {
  const res = await api.request('GET', '/_status').catch(() => null);
  const parsed = res === null ? null : serverStatusSchema.safeParse(res.body);
  return parsed?.success === true ? parsed.data : null;
}

function isLocal(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname;
  return host === 'localhost' || host === '127.0.0.1' || host === '[::1]' || host === '::1';
}

async function cpuAndTime(pid: number | null): Promise<{ cpu: number | null; at: number }> {
  return { cpu: pid === null ? null : await cpuSeconds(pid).catch(() => null), at: now() };
}

/** The CPU seconds of the tester so far: this process and its workers, every thread (their ZeroMQ ones too). */
async function testerCpuSeconds(fleet: Fleet): Promise<number | null> {
  const all = await Promise.all([process.pid, ...fleet.pids()].map((p) => cpuSeconds(p).catch(() => null)));
  return all.some((s) => s === null) ? null : all.reduce<number>((n, s) => n + (s ?? 0), 0);
}

const sum = (r: Record<string, number> | undefined): number => Object.values(r ?? {}).reduce((a, b) => a + b, 0);

function minus(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) if (v - (before[k] ?? 0) > 0) out[k] = v - (before[k] ?? 0);
  return out;
}

export async function runLoadTest(o: LoadOptions, io: Streams): Promise<number> {
  const progress = new Progress(io.stderr);
  const stop = new StopSignal(now() + o.timeoutS * 1000);
  let spawned: SpawnedServer | null = null;
  /** With --processes N: the other processes of the cluster, beside `spawned` (the first, which set the store up). */
  const others: SpawnedServer[] = [];
  let fleet: Fleet | null = null;
  const watchdog = setTimeout(
    () => {
      io.stderr.write(
        `infra-loadtest: still running ${WATCHDOG_GRACE_MS / 1000} s past --timeout: stopping by force\n`,
      );
      fleet?.kill();
      void spawned?.stop();
      for (const other of others) void other.stop();
      setTimeout(() => process.exit(1), 2000);
    },
    o.timeoutS * 1000 + WATCHDOG_GRACE_MS,
  );
  watchdog.unref();
  const onSignal = () => (stop.stopped = true);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const errors: string[] = [];
  try {
    let baseUrl: string;
    let keyPem: string;
    if (o.server.kind === 'spawn') {
      const what = o.processes > 1 ? `${o.processes} server processes` : 'a server';
      progress.say(`starting ${what}${o.server.redis === null ? '' : ` on ${o.server.redis}`}`);
      spawned = await spawnServer(o.server.redis, o.server.heartbeatIntervalMs);
      // The first sets the store up; the others join it, and the cluster spreads the partitions over them all.
      const { redis, heartbeatIntervalMs } = o.server;
      const rest = await Promise.allSettled(
        Array.from({ length: o.processes - 1 }, () => spawnServer(redis, heartbeatIntervalMs)),
      );
      for (const r of rest) if (r.status === 'fulfilled') others.push(r.value);
      const refused = rest.find((r) => r.status === 'rejected');
      if (refused !== undefined) throw refused.reason;
      baseUrl = spawned.baseUrl;
      const pem = o.key === null ? spawned.adminKeyPem : await readFile(o.key, 'utf8');
      if (pem === null) {
        throw new Error(
          'the spawned server found its store set up already, so it wrote no admin key: give --key, or an empty Redis (e.g. another database number)',
        );
      }
      keyPem = pem;
    } else {
      baseUrl = o.server.baseUrl;
      keyPem = await readFile(o.key ?? '', 'utf8');
    }
    if (others.length > 0) {
      const urls = [baseUrl, ...others.map((s) => s.baseUrl)];
      const signer = (url: string) => new ApiClient({ baseUrl: url, userId: o.user, key: keyPem, timeoutMs: 30_000 });
      baseUrl = await waitForCluster(urls, signer, o.org, stop, progress);
    }
    const api = new ApiClient({ baseUrl, userId: o.user, key: keyPem, timeoutMs: 30_000 });
    const status0 = await serverStatus(api);
    if (status0 === null) throw new Error(`${baseUrl}/_status does not answer as an infra-server`);
    const serving = [spawned, ...others].find((x) => x?.baseUrl === baseUrl);
    const pid = serving?.pid ?? (isLocal(baseUrl) ? await findListeningPid(Number(new URL(baseUrl).port || 80)) : null);
    const spawnedRefs: ProcessRef[] = [spawned, ...others].flatMap((s) =>
      s === null ? [] : [{ url: s.baseUrl, pid: s.pid }],
    );
    // Nodes fetch their config again from the server given, then from the cluster's other members in turn.
    const memberUrls = (status0.cluster?.members ?? []).map((m) => m.url);
    const apiUrls = [...new Set([baseUrl, ...spawnedRefs.map((s) => s.url), ...memberUrls])];

    // Provisioning and connecting.
    const width = String(o.nodes).length;
    const names = Array.from({ length: o.nodes }, (_, i) => `${o.prefix}${String(i + 1).padStart(width, '0')}`);
    const behaviours = assignBehaviours(o.nodes, o.behaviour, o.seed);
    const clientPair = await clientKeyPair(o.clientKey);
    const uncertain = new Set<string>(names.filter((_, i) => behaviours[i]?.flap === true));
    const detector = new OfflineDetector(api, o.org);
    let measuring = false;
    fleet = new Fleet({
      progress: (p, r, c) => progress.set(`provisioned ${p}/${o.nodes} (${r} reused), connected ${c}/${o.nodes}`),
      flap: (node, kind, at, due) => {
        if (!measuring) return;
        if (kind === 'stop') detector.silent(node, at, due);
        else detector.resumed(node);
      },
      crash: (node, kind) => {
        if (kind === 'crash') uncertain.add(node);
      },
    });
    const shares: WorkerInit[] = Array.from({ length: o.workers }, () => ({
      type: 'init',
      baseUrl,
      apiUrls,
      org: o.org,
      user: o.user,
      userKeyPem: keyPem,
      clientKeyPem: clientPair.privateKeyPem,
      clientPublicKeyPem: clientPair.publicKeyPem,
      nodes: [],
      apiConcurrency: Math.max(1, Math.ceil(o.apiConcurrency / o.workers)),
      nodesPerConnection: o.nodesPerConnection,
      slowVoteMs: o.behaviour.slowVoteMs,
      runMs: o.behaviour.runMs,
      lateHeartbeats: o.behaviour.lateHeartbeats,
      recordFile: o.record,
    }));
    names.forEach((name, i) => shares[i % o.workers]?.nodes.push({ name, behaviour: behaviours[i] ?? behaviours[0]! }));
    const t0 = now();
    progress.say(`provisioning ${o.nodes} nodes over ${o.workers} workers at ${baseUrl}`);
    await Promise.race([fleet.start(shares), until(stop)]);
    if (stop.over) throw new Error(`--timeout passed while provisioning${unheardHint(fleet.totals)}`);
    const provisionS = round((now() - t0) / 1000);
    progress.say(
      `${o.nodes} nodes provisioned and their connections opened in ${provisionS} s (${fleet.reused} reused)`,
    );
    const t1 = now();
    await waitAvailable(api, o.org, new Set(names), stop, progress, fleet);
    const readyS = round((now() - t1) / 1000);
    progress.say(`every node available ${readyS} s later`);

    // The measured part.
    const before = await cpuAndTime(pid);
    const testerBefore = await testerCpuSeconds(fleet);
    const hbBefore = { ...fleet.totals, drops: { ...fleet.totals.drops } };
    const statusBefore = await serverStatus(api);
    const refs = processRefs(statusBefore, spawnedRefs, pid === null ? null : { url: baseUrl, pid });
    const [procBefore, redisBefore] = await Promise.all([
      sampleProcesses(refs, now),
      o.redis === null ? null : commandstats(o.redis),
    ]);
    measuring = true;
    fleet.begin();
    const live = new Set<string>();
    let finishedJobs = 0;
    let scenarioDone: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (scenarioDone = resolve));
    const rest = restLoop(api, o.org, o.restConcurrency, live, stop, done);
    const watching = detector.watch(stop, done);
    let records: JobRecord[] = [];
    let completions: CompletionFeed | undefined;
    const ticker = setInterval(() => {
      const secs = round((now() - before.at) / 1000);
      progress.set(
        o.heartbeatOnly
          ? `heartbeats: ${secs}/${o.seconds} s, ${fleet?.totals.heartbeatsSent ?? 0} sent`
          : `jobs: ${finishedJobs}/${o.jobs} finished, ${live.size} in flight, ${secs} s`,
      );
    }, 250);
    try {
      if (o.heartbeatOnly) {
        await Promise.race([sleep(o.seconds * 1000), until(stop), fleet.failure$]);
      } else {
        progress.say(`running ${o.jobs} jobs of ${o.jobNodes} nodes, ${o.concurrency} at a time`);
        completions = await CompletionFeed.open(api, o.org);
        if (!completions.live) progress.say('the server does not serve the job feed: jobs are polled');
        records = await Promise.race([
          runJobs({
            api,
            org: o.org,
            options: o,
            names,
            behaviours,
            uncertain,
            stop,
            live,
            completions,
            onFinished: () => (finishedJobs += 1),
          }),
          fleet.failure$,
        ]);
      }
    } finally {
      clearInterval(ticker);
      completions?.close();
      scenarioDone();
    }
    // Nodes beat once an interval, all in one slot per worker: a run shorter than that could measure no heartbeat
    // at all. The window is stretched until every node has beaten in it (the rates divide by its length).
    const stretchUntil = now() + WINDOW_STRETCH_MAX_MS;
    while (fleet.totals.heartbeatsSent - hbBefore.heartbeatsSent < o.nodes && !stop.over && now() < stretchUntil)
      await sleep(50);
    const after = await cpuAndTime(pid);
    const testerAfter = await testerCpuSeconds(fleet);
    const [procAfter, redisAfter] = await Promise.all([
      sampleProcesses(refs, now),
      o.redis === null ? null : commandstats(o.redis),
    ]);
    const statusAfter = await serverStatus(api);
    const rssMb = pid === null ? null : await rssMiB(pid).catch(() => null);
    const restFigures = await rest;
    await watching;
    measuring = false;
    if (stop.over && !stop.stopped) errors.push(`--timeout of ${o.timeoutS} s passed before the run ended`);
    if (stop.stopped) errors.push('stopped by a signal');

    progress.say(o.cleanup ? 'stopping the nodes and deleting them' : 'stopping the nodes');
    const f = fleet;
    fleet = null;
    const deleted = await f.stop(o.cleanup);
    const seconds = (after.at - before.at) / 1000;
    const figures = figuresOf({
      o,
      records,
      fleet: f,
      hbBefore,
      seconds,
      statusBefore,
      statusAfter,
      cpu: before.cpu === null || after.cpu === null ? null : after.cpu - before.cpu,
      testerCpu: testerBefore === null || testerAfter === null ? null : testerAfter - testerBefore,
      rssMb,
      pid,
      procBefore,
      procAfter,
      redisBefore,
      redisAfter,
      rest: restFigures,
      detector,
      provisionS,
      readyS,
      deleted,
      errors: [...errors, ...f.totals.errors],
    });
    if (spawned !== null && figures.quorum_outcomes_correct.mismatches.length > 0) {
      for (const m of figures.quorum_outcomes_correct.mismatches) {
        const lines = spawned.output().filter((l) => l.includes(m.job));
        io.stderr.write(`server log lines naming job ${m.job}:\n${lines.slice(0, 40).join('\n')}\n`);
      }
    }
    progress.end();
    io.stdout.write(`${summaryText(figures)}\n`);
    if (o.json) io.stdout.write(`${JSON.stringify(figures)}\n`);
    const q = figures.quorum_outcomes_correct;
    return q.correct === q.total && errors.length === 0 ? 0 : 1;
  } catch (e) {
    progress.end();
    io.stderr.write(`infra-loadtest: ${messageOf(e)}\n`);
    // Scripts read the last line: it still says what happened.
    if (o.json) io.stdout.write(`${JSON.stringify({ nodes: o.nodes, errors: [...errors, messageOf(e)] })}\n`);
    fleet?.kill();
    return 1;
  } finally {
    clearTimeout(watchdog);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await Promise.all([spawned, ...others].map((s) => s?.stop()));
  }
}

/** The key pair the simulated clients share: from `file` when it exists, else new (and saved to `file`). */
async function clientKeyPair(file: string | null): Promise<Pick<GeneratedKeyPair, 'privateKeyPem' | 'publicKeyPem'>> {
  const pem = file === null ? null : await readFile(file, 'utf8').catch(() => null);
  if (pem !== null) {
    const publicKeyPem = createPublicKey(readPrivateKey(pem)).export({ type: 'spki', format: 'pem' }).toString();
    return { privateKeyPem: pem, publicKeyPem };
  }
  const pair = await generateKeyPair();
  if (file !== null) await writeKeyFile(file, pair.privateKeyPem);
  return pair;
}

/** Resolves once `stop` is over (deadline or signal). */
async function until(stop: StopSignal): Promise<void> {
  while (!stop.over) await sleep(100);
}

/**
 * The nodes the server refused as another process's, while it still holds them: most often those of a run that
 * ended less than an offline window ago, which the server lets go once they have been silent that long.
 */
function heldText(t: Fleet['totals']): string {
  const left = Math.ceil((t.heldUntil - Date.now()) / 1000);
  return t.held > 0 && left > 0 ? `, ${t.held} held by an earlier process for up to ${left} s more` : '';
}

/** What to check when no node and the server have heard each other at all; empty once any has. */
function unheardHint(t: FleetTotals): string {
  if (t.serverHeartbeats > 0 || t.nodesHeard > 0) return '';
  return (
    '; no node and the server heard each other over ZeroMQ: check that the host the server names (server_name) ' +
    'and its ports (server_heartbeat_port, command_port) are reachable from here'
  );
}

/**
 * Waits until the spawned processes have formed one cluster, each listed as a member holding partitions, and
 * answers the URL of one that serves the organization twice in a row. A process that handed the organization's
 * partition over may answer 404 for it rather than forward the request, so the tester talks to its owner.
 */
async function waitForCluster(
  urls: readonly string[],
  signer: (baseUrl: string) => ApiClient,
  org: string,
  stop: StopSignal,
  progress: Progress,
): Promise<string> {
  let settled = 0;
  let owner: string | null = null;
  while (settled < 2) {
    if (stop.over) throw new Error(`--timeout passed before the ${urls.length} server processes formed a cluster`);
    await sleep(READY_POLL_MS);
    const members = (await serverStatus(signer(urls[0] as string)))?.cluster?.members ?? [];
    const holding = members.filter((m) => m.partitions > 0).length;
    let serving: string | null = null;
    for (const url of urls) {
      const res = await signer(url)
        .request('GET', `/organizations/${encodeURIComponent(org)}`)
        .catch(() => null);
      if (res?.status === 200) {
        serving = url;
        break;
      }
    }
    settled = holding >= urls.length && serving !== null && serving === owner ? settled + 1 : 0;
    owner = serving;
    progress.set(
      `cluster: ${holding} of ${urls.length} processes hold partitions, ${org} served by ${serving ?? 'none'}`,
    );
  }
  progress.say(`${urls.length} server processes share the partitions; ${org} is served by ${owner ?? ''}`);
  return owner as string;
}

/** How many nodes to name when some never became available. */
const NAMED_NOT_READY = 5;

/** The first few nodes the server does not list as up and available, with what it says of them. */
function notReady(
  names: ReadonlySet<string>,
  states: ReadonlyArray<{ node_name: string; status: string; availability: string }>,
) {
  const listed = new Map(states.map((s) => [s.node_name, s]));
  const missing: string[] = [];
  for (const name of names) {
    const s = listed.get(name);
    if (s?.status === 'up' && s.availability === 'available') continue;
    missing.push(s ? `${name} (${s.status}, ${s.availability})` : `${name} (not listed)`);
    if (missing.length === NAMED_NOT_READY) break;
  }
  return missing.length === 0 ? '' : `; not available: ${missing.join(', ')}`;
}

/** Polls node_states until every one of `names` is up and available. */
async function waitAvailable(
  api: ApiClient,
  org: string,
  names: ReadonlySet<string>,
  stop: StopSignal,
  progress: Progress,
  fleet: Fleet,
): Promise<void> {
  const path = `/organizations/${encodeURIComponent(org)}/pushy/node_states`;
  // The list is as long as the fleet: a large one is asked for less often, and a server too busy to answer one
  // in time (its heartbeats come first) is asked again.
  const pollMs = Math.max(READY_POLL_MS, names.size / 20);
  let ready = 0;
  for (;;) {
    let states;
    try {
      states = await call(api, 'GET', path, nodeStateListSchema);
    } catch (e) {
      if (!(e instanceof Error && e.name === 'TimeoutError') || stop.over) throw e;
      progress.set(`available ${ready}/${names.size} at the last answer; the node list took over 30 s, asking again`);
      continue;
    }
    ready = 0;
    for (const s of states) if (names.has(s.node_name) && s.status === 'up' && s.availability === 'available') ready++;
    const t = fleet.totals;
    const skipped = t.drops.send_skipped ?? 0;
    progress.set(
      `available ${ready}/${names.size}, ${t.nodesHeard} heard by the server${heldText(t)}; heartbeats ${t.heartbeatsSent} sent, ${skipped} skipped, ${t.serverHeartbeats} received`,
    );
    // Both: after a restart the server lists a node as it was before until the node's new process is heard,
    // and a job started then would see the node restart during its vote.
    if (ready === names.size && t.nodesHeard >= names.size) return;
    if (stop.over) {
      const hint =
        t.held > 0
          ? `; the server refused ${t.held} as held by another process: play other nodes with --prefix`
          : unheardHint(t);
      throw new Error(
        `--timeout passed with ${ready} of ${names.size} nodes available${hint}${notReady(names, states)}`,
      );
    }
    await Promise.race([sleep(pollMs), fleet.failure$]);
  }
}

interface FigureInputs {
  o: LoadOptions;
  records: JobRecord[];
  fleet: Fleet;
  hbBefore: Fleet['totals'];
  seconds: number;
  statusBefore: ServerStatusBody | null;
  statusAfter: ServerStatusBody | null;
  cpu: number | null;
  /** The tester's CPU seconds over the measured part (itself and its workers). */
  testerCpu: number | null;
  rssMb: number | null;
  pid: number | null;
  procBefore: ProcessSample[];
  procAfter: ProcessSample[];
  redisBefore: Record<string, number> | null;
  redisAfter: Record<string, number> | null;
  rest: RestFigures;
  detector: OfflineDetector;
  provisionS: number;
  readyS: number;
  deleted: number;
  errors: string[];
}

function figuresOf(x: FigureInputs): Figures {
  const { o, records, fleet } = x;
  const byStatus: Record<string, number> = {};
  const acked: number[] = [];
  const toRunning: number[] = [];
  const toComplete: number[] = [];
  const mismatches: Mismatch[] = [];
  const phases: Record<keyof JobPhases, number[]> = {
    post_to_first_commit: [],
    commit_fan_out: [],
    last_commit_to_last_ack: [],
    last_ack_to_first_run: [],
    run_fan_out: [],
    last_run_to_last_result: [],
    last_result_to_seen_finished: [],
  };
  let correct = 0;
  let ambiguous = 0;
  for (const r of records) {
    const got: JobStatus | 'unfinished' | 'not_started' =
      r.id === null ? 'not_started' : (r.final?.status ?? 'unfinished');
    byStatus[got] = (byStatus[got] ?? 0) + 1;
    const e = r.expectation;
    if (e.statuses.length > 1) ambiguous += 1;
    if (got !== 'unfinished' && got !== 'not_started' && e.statuses.includes(got)) correct += 1;
    else {
      const nodes: Record<string, number> = {};
      for (const [status, list] of Object.entries(r.final?.nodes ?? {})) nodes[status] = list.length;
      mismatches.push({
        job: r.id ?? `(not started: ${r.error ?? 'no answer'})`,
        expected: e.statuses,
        got,
        quorum: e.quorum,
        ready_min: e.readyMin,
        ready_max: e.readyMax,
        nodes,
      });
    }
    const t = r.id === null ? undefined : fleet.tallies.get(r.id);
    if (t !== undefined && t.acks > 0 && t.acks === e.readyMax) {
      acked.push(t.lastAckAt - t.firstCommitAt);
      phases.post_to_first_commit.push(t.firstCommitAt - r.postedAt);
      phases.commit_fan_out.push(t.lastCommitAt - t.firstCommitAt);
      phases.last_commit_to_last_ack.push(t.lastAckAt - t.lastCommitAt);
      if (t.runs > 0) {
        phases.last_ack_to_first_run.push(t.firstRunAt - t.lastAckAt);
        phases.run_fan_out.push(t.lastRunAt - t.firstRunAt);
        if (t.lastResultAt > 0) phases.last_run_to_last_result.push(t.lastResultAt - t.lastRunAt);
        if (t.lastResultAt > 0 && r.finishedAt !== null)
          phases.last_result_to_seen_finished.push(r.finishedAt - t.lastResultAt);
      }
    }
    if (t !== undefined && t.runs > 0) toRunning.push(t.firstRunAt - r.postedAt);
    if (r.final?.status === 'complete' && r.finishedAt !== null) toComplete.push(r.finishedAt - r.postedAt);
  }
  const sb = x.statusBefore?.push_jobs;
  const sa = x.statusAfter?.push_jobs;
  const serverDrops = sa != null && sb != null ? minus(sa.dropped, sb.dropped) : {};
  const testerDrops = minus(fleet.totals.drops, x.hbBefore.drops);
  const perSecond = (n: number) => round(n / Math.max(x.seconds, 0.001));
  const busy = Math.max(0, ...x.rest.busyMs);
  const processes = processFigures(x.procBefore, x.procAfter);
  // Heartbeats for the Redis ratio: every process's own count, else the one server's.
  const counted = processes.filter((p) => p.heartbeats !== null);
  const heartbeats =
    counted.length > 0
      ? counted.reduce((n, p) => n + (p.heartbeats ?? 0), 0)
      : sa != null && sb != null
        ? sa.heartbeats - sb.heartbeats
        : null;
  const redis = redisOpsPerHeartbeat(x.redisBefore, x.redisAfter, heartbeats);
  const downCounted = processes.filter((p) => p.downs !== null);
  const downs =
    downCounted.length > 0
      ? downCounted.reduce((n, p) => n + (p.downs ?? 0), 0)
      : sa?.lag !== undefined && sb?.lag !== undefined
        ? sa.lag.downs - sb.lag.downs
        : null;
  return {
    nodes: o.nodes,
    workers: o.workers,
    nodes_per_connection: o.nodesPerConnection,
    reused_nodes: fleet.reused,
    provision_s: x.provisionS,
    ready_s: x.readyS,
    duration_s: round(x.seconds),
    jobs: records.length,
    jobs_by_status: byStatus,
    commit_to_all_acked_ms: spread(acked),
    post_to_running_ms: spread(toRunning),
    post_to_complete_ms: spread(toComplete),
    job_phases_ms: medians(phases),
    quorum_outcomes_correct: { correct, total: records.length, ambiguous, mismatches },
    offered_hb_per_s: perSecond(fleet.totals.heartbeatsSent - x.hbBefore.heartbeatsSent),
    // Every process's heartbeats: a cluster's nodes are spread over their gateways.
    processed_hb_per_s: heartbeats === null ? null : perSecond(heartbeats),
    server_hb_received_per_s: perSecond(fleet.totals.serverHeartbeats - x.hbBefore.serverHeartbeats),
    dropped: sum(serverDrops) + sum(testerDrops),
    dropped_by_reason: { server: serverDrops, tester: testerDrops },
    votes_recovered:
      sa?.votes_recovered && sb?.votes_recovered
        ? {
            commit_resent: sa.votes_recovered.commit_resent - sb.votes_recovered.commit_resent,
            ack_from_heartbeat: sa.votes_recovered.ack_from_heartbeat - sb.votes_recovered.ack_from_heartbeat,
          }
        : null,
    offline_detect_ms: {
      ...spread(x.detector.detectedMs),
      count: x.detector.detectedMs.length,
      missed: x.detector.missed,
    },
    nodes_marked_down: downs,
    server_pid: x.pid,
    // A cluster's processes together (each is listed under `processes`).
    server_cpu_pct:
      processes.length > 1
        ? round(processes.reduce((n, p) => n + (p.cpu_pct ?? 0), 0))
        : x.cpu === null
          ? null
          : round((100 * x.cpu) / Math.max(x.seconds, 0.001)),
    server_rss_mb: x.rssMb === null ? null : round(x.rssMb),
    processes,
    redis_calls: redis.calls,
    redis_ops_per_heartbeat: redis.perHeartbeat,
    config_refetches: { ...fleet.totals.refetches },
    tester_cpu_pct: x.testerCpu === null ? null : round((100 * x.testerCpu) / Math.max(x.seconds, 0.001)),
    tester_lag_max_ms: fleet.totals.lagMaxMs,
    rest_get_job_per_s: x.rest.gets === 0 ? null : round((x.rest.gets * 1000) / Math.max(busy, 1)),
    rest_get_job_p99_ms: percentile(x.rest.latenciesMs, 99),
    nodes_held_by_another_process: fleet.totals.held,
    deleted_nodes: x.deleted,
    errors: x.errors,
  };
}
