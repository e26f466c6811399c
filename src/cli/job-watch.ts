// Waiting for a job (`cli job start`, `cli job watch`): the job's event feed drives the progress line, one line
// per node event with --verbose; when the server does not serve the feed, or it ends before the job does, the
// job is polled instead. The report always comes from the job as GET shows it once finished.
import type { StreamItem } from '../api/event-stream.js';
import { FEED_EVENT_DATA, isFeedEventName, NODE_STATUS_AFTER_RUN, NODE_STATUS_AFTER_VOTE } from '../api/job-feed.js';
import { jobSchema, type JobBody } from '../api/push-jobs.js';
import { isFinished, type JobStatus, type NodeJobStatus } from '../push/job-states.js';
import type { Cli } from './cli-connection.js';
import { CommandError } from './terminal.js';
import { progressOf, type ProgressPrinter, type ProgressShape } from './progress.js';

export interface WaitOptions {
  pollSeconds: number;
  /** A line per node event. */
  verbose: boolean;
}

type FeedEvent = { event: string; data: Record<string, unknown> };

// What each event says of its node's status; events not listed leave it as it was (the final GET is the truth).
const VOTED: Partial<Record<string, NodeJobStatus>> = { ...NODE_STATUS_AFTER_VOTE, down: 'unavailable' };
const RAN: Partial<Record<string, NodeJobStatus>> = NODE_STATUS_AFTER_RUN;
const UNDECIDED: ReadonlySet<NodeJobStatus> = new Set(['new', 'ready']);

/** The job as its events have shown it so far, for the progress line. */
export class JobView {
  status: JobStatus;
  private readonly nodes = new Map<string, NodeJobStatus>();
  /** A rollout's waves, each its nodes, and the wave its events reached. */
  private readonly waves: readonly (readonly string[])[];
  private wave = 0;

  constructor(job: JobBody) {
    this.status = job.status;
    this.waves = job.rollout?.waves.map((w) => w.nodes) ?? [];
    // The feed replays the job from its first event, so every node starts where the job started it: a rollout's
    // nodes wait for their wave, whose start the feed says.
    const initial: NodeJobStatus = this.waves.length > 0 ? 'waiting' : 'new';
    for (const names of Object.values(job.nodes)) for (const node of names ?? []) this.nodes.set(node, initial);
    if (this.status !== 'new' && !isFinished(this.status)) this.status = 'voting';
  }

  apply(e: FeedEvent): void {
    const node = typeof e.data.node === 'string' ? e.data.node : undefined;
    const status = String(e.data.status);
    const before = node === undefined ? undefined : this.nodes.get(node);
    if (e.event === 'start') this.status = 'voting';
    else if (e.event === 'quorum_succeeded') this.status = 'running';
    else if (e.event === 'job_complete') this.status = status as JobStatus;
    else if (e.event === 'wave_start') this.waveStarted(Number(e.data.wave));
    if (node === undefined || before === undefined) return;
    let next: NodeJobStatus | undefined;
    if (e.event === 'quorum_vote' && (status !== 'down' || UNDECIDED.has(before))) next = VOTED[status];
    else if (e.event === 'run_start') next = 'running';
    else if (e.event === 'run_complete') next = RAN[status];
    if (next !== undefined) this.nodes.set(node, next);
  }

  private waveStarted(wave: number): void {
    this.wave = wave;
    this.status = 'voting';
    for (const node of this.waves[wave - 1] ?? []) if (this.nodes.get(node) === 'waiting') this.nodes.set(node, 'new');
  }

  /** The shape the progress line reads. */
  get body(): ProgressShape {
    const nodes: JobBody['nodes'] = {};
    for (const [node, status] of this.nodes) (nodes[status] ??= []).push(node);
    const wave = this.waves.length === 0 ? undefined : { current: this.wave, of: this.waves.length };
    return wave === undefined ? { status: this.status, nodes } : { status: this.status, nodes, wave };
  }
}

/**
 * `10:35:19 web1 quorum_vote success`: one node event for --verbose; a rollout's `10:35:19 wave 2 start (2 nodes)`
 * and `10:35:49 wave 2 end complete (1 failure)`; undefined for the other job-level events.
 */
export function eventLine(e: FeedEvent): string | undefined {
  const time = typeof e.data.timestamp === 'string' ? `${e.data.timestamp.slice(11, 19)} ` : '';
  if (e.event === 'wave_start') return `${time}wave ${String(e.data.wave)} start (${String(e.data.nodes)} nodes)`;
  if (e.event === 'wave_end') {
    const failures = Number(e.data.failures);
    return `${time}wave ${String(e.data.wave)} end ${String(e.data.status)} (${failures} failure${failures === 1 ? '' : 's'})`;
  }
  if (typeof e.data.node !== 'string') return undefined;
  const status = typeof e.data.status === 'string' ? ` ${e.data.status}` : '';
  return `${time}${e.data.node} ${e.event}${status}`;
}

function parseEvent(item: StreamItem): FeedEvent | undefined {
  if (item.kind !== 'event' || !isFeedEventName(item.value.event)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(item.value.data);
  } catch {
    return undefined;
  }
  const parsed = FEED_EVENT_DATA[item.value.event].safeParse(json);
  return parsed.success ? { event: item.value.event, data: parsed.data } : undefined;
}

/** Waits until the job finishes, showing its progress on `printer`, and returns it as GET shows it then. */
export async function waitForJob(cli: Cli, id: string, o: WaitOptions, printer: ProgressPrinter): Promise<JobBody> {
  try {
    await followFeed(cli, id, o, printer);
    return await pollJob(cli, id, o.pollSeconds, printer);
  } catch (e) {
    if (!(e instanceof CommandError)) throw e;
    throw new CommandError(
      e.message,
      [...e.details, `Job ${id} may still be running: see cli job status ${id}.`],
      e.exitCode,
      { cause: e },
    );
  } finally {
    printer.finish();
  }
}

/** Follows the job's feed until the job is over or the feed ends; a job the feed cannot show is left to polling. */
async function followFeed(cli: Cli, id: string, o: WaitOptions, printer: ProgressPrinter): Promise<void> {
  const feed = await cli.api.feed(cli.api.orgPath('pushy', 'job_status_feed', id));
  if (feed === null) return;
  try {
    const view = new JobView(await cli.api.call('GET', cli.api.orgPath('pushy', 'jobs', id), jobSchema));
    for await (const item of feed.items) {
      const e = parseEvent(item);
      if (e === undefined || e.event === 'summary') continue;
      view.apply(e);
      const line = o.verbose ? eventLine(e) : undefined;
      if (line !== undefined) printer.note(line);
      printer.update(view.body);
      if (e.event === 'job_complete') return;
    }
  } catch (e) {
    // A feed cut off (a restarting server, a proxy timing out) leaves the rest to polling.
    if (e instanceof CommandError) throw e;
  } finally {
    feed.close();
  }
}

async function pollJob(cli: Cli, id: string, pollSeconds: number, printer: ProgressPrinter): Promise<JobBody> {
  const path = cli.api.orgPath('pushy', 'jobs', id);
  // Short jobs end in a fraction of a second: the first polls come quickly, then back off to the interval.
  let wait = Math.min(100, pollSeconds * 1000);
  for (;;) {
    const job = await cli.api.call('GET', path, jobSchema);
    printer.update(progressOf(job));
    if (isFinished(job.status)) return job;
    await cli.sleep(wait);
    wait = Math.min(wait * 2, pollSeconds * 1000);
  }
}
