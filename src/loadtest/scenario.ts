// The measured part of a run: jobs started through the signed API (each slot of --concurrency on nodes of its
// own), each awaited and held against its expected outcome; signed GETs of running jobs alongside; and the
// offline detection of flapping nodes, timed from their last heartbeat to the server listing them down.
import type { AnswerSize, ApiClient } from '../auth/api-client.js';
import { jobCreatedSchema, jobSchema, nodeStateSchema, type JobBody, type JobStartBody } from '../api/push-jobs.js';
import { isFinished } from '../push/job-states.js';
import type { z } from 'zod';
import { messageOf } from '../lib/thrown.js';
import { delay, type Timers } from '../lib/timers.js';
import type { NodeBehaviour } from './behaviour.js';
import { now, testerTimers } from './clock.js';
import type { CompletionFeed } from './completions.js';
import { expectOutcome, quorumCount, type Expectation } from './expected.js';
import type { LoadOptions } from './options.js';
import { pool } from './provision.js';
import { expectRollout } from './rollout-expected.js';

const JOB_POLL_MS = 20;
/** How often a job is polled while the organization's feed is followed, in case the feed misses its end. */
const FEED_SAFETY_POLL_MS = 1000;
const DETECT_POLL_MS = 100;
/** Polling step near a silent node's offline deadline, and how long before the deadline it starts. */
const DETECT_STEP_MS = 10;
const DETECT_NEAR_MS = 100;
const DETECT_CONCURRENCY = 8;

export interface JobRecord {
  id: string | null;
  postedAt: number;
  /** When the organization's feed told the job finished, else the first GET that saw it finished. */
  finishedAt: number | null;
  final: JobBody | null;
  expectation: Expectation;
  error: string | null;
}

export class StopSignal {
  stopped = false;
  constructor(readonly deadline: number) {}
  get over(): boolean {
    return this.stopped || now() >= this.deadline;
  }
}

/** A signed request whose 2xx answer is parsed by `schema`; anything else throws with the server's words. */
export async function call<S extends z.ZodType>(
  api: ApiClient,
  method: string,
  path: string,
  schema: S,
  body?: unknown,
): Promise<z.output<S>> {
  const res = await api.request(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return schema.parse(res.body);
}

/** How long a job is polled through a server that does not answer (restarting, store down) before giving up. */
const OUTAGE_TOLERANCE_MS = 120_000;

/**
 * GETs the job until it answers 2xx. A refused connection or a 5xx (a server killed and started again, a store
 * away) is waited out for OUTAGE_TOLERANCE_MS: an outage under load is a scenario to measure, not the end of it.
 */
async function getJob(
  api: ApiClient,
  path: string,
  stop: StopSignal,
  timers: Timers,
): Promise<z.output<typeof jobSchema>> {
  let failingSince: number | null = null;
  for (;;) {
    const res = await api.request('GET', path).catch((e: unknown) => ({ status: 0, body: String(e) }));
    if (res.status >= 200 && res.status < 300) return jobSchema.parse(res.body);
    const transient = res.status === 0 || res.status >= 500;
    failingSince ??= timers.now();
    if (!transient || stop.over || timers.now() - failingSince > OUTAGE_TOLERANCE_MS)
      throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    await delay(timers, JOB_POLL_MS * 10);
  }
}

export interface JobContext {
  api: ApiClient;
  org: string;
  options: LoadOptions;
  names: readonly string[];
  behaviours: readonly NodeBehaviour[];
  /** Nodes whose availability at a job's start cannot be known (flapping, crashed earlier). */
  uncertain: ReadonlySet<string>;
  stop: StopSignal;
  /** Job ids in flight, read by the REST loop. */
  live: Set<string>;
  completions: CompletionFeed;
  onFinished(record: JobRecord): void;
  timers: Timers;
}

/** Runs --jobs jobs, --concurrency at a time; resolves with every job started. */
export async function runJobs(ctx: JobContext): Promise<JobRecord[]> {
  const o = ctx.options;
  const records: JobRecord[] = [];
  let started = 0;
  const slot = async (k: number) => {
    const first = k * o.jobNodes;
    const nodes = ctx.names.slice(first, first + o.jobNodes);
    const behaviours = ctx.behaviours.slice(first, first + o.jobNodes);
    while (started < o.jobs && !ctx.stop.over) {
      started += 1;
      const record = await runJob(ctx, nodes, behaviours);
      records.push(record);
      ctx.onFinished(record);
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, (_, k) => slot(k)));
  return records;
}

/**
 * The outcome a job on `nodes` must have, once whether an abort was accepted is known: a job in waves makes its
 * quorum in each wave (rollout-expected.ts), in the order of its nodes' names.
 */
function expectationOf(
  ctx: JobContext,
  nodes: string[],
  behaviours: NodeBehaviour[],
): (aborted: boolean) => Expectation {
  const o = ctx.options;
  const view = nodes.map((name, i) => ({
    behaviour: behaviours[i] as NodeBehaviour,
    uncertain: ctx.uncertain.has(name),
  }));
  const timing = {
    slowVoteMs: o.behaviour.slowVoteMs,
    votingTimeoutMs: o.votingTimeoutS * 1000,
    runMs: o.behaviour.runMs,
    runTimeoutMs: o.runTimeoutS * 1000,
  };
  const { rollout } = o;
  return (aborted) =>
    rollout === null
      ? expectOutcome(view, quorumCount(o.quorum, nodes.length), { ...timing, aborted })
      : expectRollout(view, rollout, (size) => quorumCount(o.quorum, size), { ...timing, aborted });
}

/** The POST body of a job on `nodes`, as the options ask for it. */
function jobBodyOf(o: LoadOptions, nodes: string[]): JobStartBody {
  return {
    command: o.command,
    nodes,
    quorum: o.quorum.kind === 'count' ? o.quorum.value : `${o.quorum.value}%`,
    voting_timeout: o.votingTimeoutS,
    run_timeout: o.runTimeoutS,
    ...(o.rollout === null ? {} : { rollout: o.rollout }),
  };
}

async function runJob(ctx: JobContext, nodes: string[], behaviours: NodeBehaviour[]): Promise<JobRecord> {
  const o = ctx.options;
  const expect = expectationOf(ctx, nodes, behaviours);
  const record: JobRecord = {
    id: null,
    postedAt: ctx.timers.now(),
    finishedAt: null,
    final: null,
    expectation: expect(false),
    error: null,
  };
  const jobs = `/organizations/${encodeURIComponent(ctx.org)}/pushy/jobs`;
  const body = jobBodyOf(o, nodes);
  let aborted: Promise<boolean> = Promise.resolve(false);
  try {
    const created = await call(ctx.api, 'POST', jobs, jobCreatedSchema, body);
    const id = created.id;
    record.id = id;
    ctx.live.add(id);
    const path = `${jobs}/${encodeURIComponent(id)}`;
    if (o.abortAfterMs !== null) {
      const wait = Math.max(0, record.postedAt + o.abortAfterMs - ctx.timers.now());
      aborted = delay(ctx.timers, wait).then(async () => {
        const res = await ctx.api.request('POST', `${path}/abort`);
        return res.status < 300;
      });
    }
    // The feed tells when the job finished; a GET then takes the job as it ended. While the feed is followed the
    // job is polled only as a safety net, else every JOB_POLL_MS.
    let toldAt: number | null = null;
    const told = ctx.completions.finishedAt(id).then((at) => (toldAt = at));
    while (!ctx.stop.over) {
      const job = await getJob(ctx.api, path, ctx.stop, ctx.timers);
      if (isFinished(job.status)) {
        record.finishedAt = toldAt ?? ctx.timers.now();
        record.final = job;
        break;
      }
      await (toldAt === null && ctx.completions.live
        ? Promise.race([told, delay(ctx.timers, FEED_SAFETY_POLL_MS)])
        : delay(ctx.timers, JOB_POLL_MS));
    }
    ctx.live.delete(id);
  } catch (e) {
    record.error = messageOf(e);
  }
  if (o.abortAfterMs !== null && record.final !== null) {
    const accepted = await aborted.catch(() => false);
    record.expectation = expect(accepted);
  }
  return record;
}

export interface RestFigures {
  gets: number;
  latenciesMs: number[];
  /** Per loop, the time spent on GETs; their largest is the wall time the loops were busy. */
  busyMs: number[];
  errors: number;
}

/**
 * A GET counts as answered on a 200 with a JSON body, as a load generator counts it. The body is read but neither
 * kept nor parsed: a 10,000-node job is 600 KB, and parsing and checking it took 8 ms of the tester's CPU per GET,
 * on the cores the server shares. Each job is still read and checked whole once it ends (`getJob`).
 */
function isJsonAnswer(res: AnswerSize): boolean {
  return res.status === 200 && (res.headers.get('content-type') ?? '').startsWith('application/json') && res.size > 0;
}

/** `--rest-concurrency` loops of signed GETs, each of a job in flight, until `stop`. */
export async function restLoop(
  api: ApiClient,
  org: string,
  loops: number,
  live: ReadonlySet<string>,
  stop: StopSignal,
  done: Promise<unknown>,
  timers: Timers = testerTimers,
): Promise<RestFigures> {
  const figures: RestFigures = { gets: 0, latenciesMs: [], busyMs: Array<number>(loops).fill(0), errors: 0 };
  let finished = false;
  void done.finally(() => (finished = true));
  const loop = async (k: number) => {
    let turn = k;
    while (!finished && !stop.over) {
      const ids = [...live];
      const id = ids[turn++ % Math.max(1, ids.length)];
      if (id === undefined) {
        await delay(timers, JOB_POLL_MS);
        continue;
      }
      const t0 = timers.now();
      const res = await api
        .measure('GET', `/organizations/${encodeURIComponent(org)}/pushy/jobs/${encodeURIComponent(id)}`)
        .catch(() => null);
      const ms = timers.now() - t0;
      if (res === null || !isJsonAnswer(res)) {
        figures.errors += 1;
        continue;
      }
      figures.gets += 1;
      figures.latenciesMs.push(ms);
      figures.busyMs[k] = (figures.busyMs[k] ?? 0) + ms;
    }
  };
  await Promise.all(Array.from({ length: loops }, (_, k) => loop(k)));
  return figures;
}

/** A silent node waiting to be seen down. */
interface Silence {
  lastBeatAt: number;
  /** When the server's offline window runs out. */
  due: number;
  polledAt: number;
}

/**
 * Times from a flapping node's last heartbeat to the server listing it down. A silent node is polled every
 * DETECT_POLL_MS, and every DETECT_STEP_MS from shortly before its offline window runs out, so the figure
 * measures the server more than the polling.
 */
export class OfflineDetector {
  readonly detectedMs: number[] = [];
  /** Silences that ended before the server listed the node down. */
  missed = 0;
  private readonly pending = new Map<string, Silence>();
  private running = false;

  constructor(
    private readonly api: ApiClient,
    private readonly org: string,
    private readonly timers: Timers = testerTimers,
  ) {}

  silent(node: string, lastBeatAt: number, due: number): void {
    if (lastBeatAt > 0) this.pending.set(node, { lastBeatAt, due, polledAt: 0 });
  }

  resumed(node: string): void {
    if (this.pending.delete(node)) this.missed += 1;
  }

  /** Polls the nodes waiting to be seen down until `stop`. */
  async watch(stop: StopSignal, done: Promise<unknown>): Promise<void> {
    if (this.running) return;
    this.running = true;
    let finished = false;
    void done.finally(() => (finished = true));
    while (!finished && !stop.over) {
      const at = this.timers.now();
      const polled = [...this.pending].filter(
        ([, s]) => at - s.polledAt >= DETECT_POLL_MS || at >= s.due - DETECT_NEAR_MS,
      );
      await pool(polled, DETECT_CONCURRENCY, async ([node, silence]) => {
        silence.polledAt = this.timers.now();
        const res = await this.api
          .request(
            'GET',
            `/organizations/${encodeURIComponent(this.org)}/pushy/node_states/${encodeURIComponent(node)}`,
          )
          .catch(() => null);
        const seenAt = this.timers.now();
        const state = res === null ? null : nodeStateSchema.safeParse(res.body);
        if (state?.success === true && state.data.status === 'down' && this.pending.get(node) === silence) {
          this.pending.delete(node);
          this.detectedMs.push(seenAt - silence.lastBeatAt);
        }
      });
      await delay(this.timers, DETECT_STEP_MS);
    }
  }
}
