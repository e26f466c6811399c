// The job and organization feeds of one server process (reference 6.5). Job actors publish what their machine
// says; readers (the SSE routes, the dashboard) take events from the logs kept here, and taps (metrics) see
// every event as it is published. A job's log lives from its actor's start until a while after it finished;
// an organization's log keeps `start`, `job_complete` and a rollout's `wave_start` and `wave_end` for
// org_feed_expiration, and in a cluster also hands them to an OrgFeedHistory (Redis), from which the next owner
// of the organization starts its log.
import { feedTimestamp, type JobNote } from '../api/job-feed.js';
import { realTimers, type Timers } from '../lib/timers.js';
import { FeedLog, type FeedEvent } from './feed-log.js';

export type { FeedEvent, FeedReader } from './feed-log.js';
export { FeedLog } from './feed-log.js';

export type FeedTap = (org: string, job: string, e: FeedEvent) => void;

/** Where an organization's feed is kept beyond this process's memory, for whichever process serves it next. */
export interface OrgFeedHistory {
  /** The event was added to the organization's log here. */
  kept(org: string, e: FeedEvent): void;
  /** The organization is deleted: its history goes too. */
  deleted(org: string): void;
}

export interface FeedSettings {
  /** How long a finished job's events stay readable (the original's wait_complete_time). */
  lingerMs: number;
  /** How long an organization's feed keeps its events (org_feed_expiration). */
  orgExpirationMs: number;
  /** A reader silent this long gets a `:keepalive` comment (keep_alive_time). */
  keepAliveMs: number;
  /** How many events a reader may fall behind before it is dropped. */
  readerAllowance: number;
  now: () => number;
  /** The linger and keepalive timers; Node's unless a unit test runs the feeds on a clock of its own. */
  timers?: Timers;
}

const ORG_EVENTS: ReadonlySet<string> = new Set(['start', 'job_complete', 'wave_start', 'wave_end']);

export class FeedHub {
  private readonly jobs = new Map<string, FeedLog>();
  private readonly orgs = new Map<string, FeedLog>();
  private readonly taps = new Set<FeedTap>();
  private history: OrgFeedHistory | undefined;

  constructor(readonly settings: FeedSettings) {}

  get timers(): Timers {
    return this.settings.timers ?? realTimers;
  }

  /** A job's actor started (or was restored): its feed exists from now on, even before its first event. */
  jobStarted(org: string, job: string): void {
    const key = jobKey(org, job);
    if (!this.jobs.has(key)) this.jobs.set(key, new FeedLog('job'));
  }

  /** The job's machine said these things at `at`; a finished job's feed takes nothing more. */
  publish(org: string, job: string, notes: readonly JobNote[], at: number): void {
    const key = jobKey(org, job);
    let log = this.jobs.get(key);
    if (log === undefined) this.jobs.set(key, (log = new FeedLog('job')));
    if (log.done) return;
    const timestamp = feedTimestamp(at);
    for (const note of notes) {
      const e = log.append({ event: note.event, at, data: { ...note.data, timestamp } });
      for (const tap of this.taps) tap(org, job, e);
      if (ORG_EVENTS.has(note.event)) {
        const kept = this.orgLog(org).append({ event: note.event, at, data: { ...e.data, job } });
        this.history?.kept(org, kept);
      }
      if (note.event === 'job_complete') {
        log.close();
        const done = log;
        this.timers.after(
          this.settings.lingerMs,
          () => {
            if (this.jobs.get(key) === done) this.jobs.delete(key);
          },
          { unref: true },
        );
        return;
      }
    }
  }

  /** The live (or lingering) log of a job, or undefined once only its stored record can answer. */
  jobLog(org: string, job: string): FeedLog | undefined {
    return this.jobs.get(jobKey(org, job));
  }

  /** An organization's log, its events older than org_feed_expiration dropped. */
  orgLog(org: string): FeedLog {
    let log = this.orgs.get(org);
    if (log === undefined) this.orgs.set(org, (log = new FeedLog('org')));
    log.expire(this.settings.now() - this.settings.orgExpirationMs);
    return log;
  }

  /** From now on the organizations' events are also kept in `history`. */
  keepHistoryIn(history: OrgFeedHistory): void {
    this.history = history;
  }

  /**
   * The organization is served here from now on, and `earlier` is what its feed said at its earlier owner (oldest
   * first): its log starts with those events, under their ids, unless it has started already.
   */
  resumeOrg(org: string, earlier: readonly FeedEvent[]): void {
    const log = this.orgs.get(org);
    if (earlier.length === 0 || (log !== undefined && (log.end > 1 || log.readerCount > 0))) return;
    this.orgs.set(org, new FeedLog('org', undefined, earlier));
  }

  /** Every job event of every organization, as it is published; returns the way to stop. */
  tap(listener: FeedTap): () => void {
    this.taps.add(listener);
    return () => this.taps.delete(listener);
  }

  /** A deleted organization's feeds end, here and in the history; one created later under its name starts with none. */
  orgDeleted(org: string): void {
    this.forgetOrg(org);
    this.history?.deleted(org);
  }

  /** The organization's feeds end here (it is deleted, or served elsewhere from now on). */
  forgetOrg(org: string): void {
    this.orgs.get(org)?.close();
    this.orgs.delete(org);
    const prefix = jobKey(org, '');
    for (const [key, log] of this.jobs) {
      if (key.startsWith(prefix)) {
        log.close();
        this.jobs.delete(key);
      }
    }
  }
}

// Organization names never hold a NUL, so the pair cannot collide.
function jobKey(org: string, job: string): string {
  return `${org}\u0000${job}`;
}
