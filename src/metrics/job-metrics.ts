// Job metrics, fed by the job-event feed (the events of reference 6.5): jobs started and finished by status, how
// long they took, how long voting took when every node decided, and a rollout's waves and halts. Per-node events
// only touch a map.
import { Counter, Histogram, type Registry } from 'prom-client';
import { z } from 'zod';
import { isFinished, JOB_STATUSES } from '../push/job-states.js';
import type { FeedHub, FeedTap } from '../feeds/feed-hub.js';
import { WAVE_STATUSES } from '../api/rollout.js';

/** What the metrics need of the feed hub: every event of every job, as it happens. */
export type JobFeed = Pick<FeedHub, 'tap'>;

/** `other` keeps the totals whole should the feed ever report a status this version does not know. */
const endStatusSchema = z.enum(JOB_STATUSES).refine(isFinished);
const waveEndSchema = z.enum(WAVE_STATUSES);

/** From seconds (a small job on a quiet fleet) to the default run_timeout of an hour. */
const DURATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
/** From one round trip to the default voting_timeout of 60 s. */
const VOTING_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** What a job in flight needs remembered between its events. */
interface JobInFlight {
  startedAt: number;
  /** The voting timeout left a node undecided: the job's voting is not observed. */
  votingTimedOut: boolean;
  votingEnded: boolean;
}

export class JobMetrics {
  private readonly started: Counter<'org'>;
  private readonly finished: Counter<'org' | 'status'>;
  private readonly duration: Histogram<'status'>;
  private readonly voting: Histogram;
  private readonly wavesStarted: Counter<'org'>;
  private readonly wavesEnded: Counter<'org' | 'status'>;
  private readonly halted: Counter<'org'>;
  private readonly inFlight = new Map<string, JobInFlight>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.started = new Counter({
      name: 'infra_jobs_started_total',
      help: 'Push jobs started, by organization.',
      labelNames: ['org'],
      registers,
    });
    this.finished = new Counter({
      name: 'infra_jobs_finished_total',
      help: 'Push jobs finished, by organization and final status (complete, quorum_failed, timed_out, aborted, crashed, max_failures_exceeded).',
      labelNames: ['org', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'infra_job_duration_seconds',
      help: 'Time from a push job starting to its end, by final status (jobs started since this server started).',
      labelNames: ['status'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.voting = new Histogram({
      name: 'infra_job_commit_to_all_acked_seconds',
      help: 'Time from a push job starting (commit sent) until no node was left undecided in voting; jobs whose voting timed out or was aborted are left out.',
      buckets: VOTING_BUCKETS,
      registers,
    });
    this.wavesStarted = new Counter({
      name: 'infra_rollout_waves_started_total',
      help: 'Waves of rollouts (jobs in waves) that started, by organization.',
      labelNames: ['org'],
      registers,
    });
    this.wavesEnded = new Counter({
      name: 'infra_rollout_waves_ended_total',
      help: 'Waves of rollouts that ended, by organization and how (complete, quorum_failed, timed_out, aborted, crashed).',
      labelNames: ['org', 'status'],
      registers,
    });
    this.halted = new Counter({
      name: 'infra_rollouts_halted_total',
      help: 'Rollouts that started no further wave because their failures passed max_failures, by organization.',
      labelNames: ['org'],
      registers,
    });
  }

  /** Listens to `feed` until the returned function is called. */
  watch(feed: JobFeed): () => void {
    return feed.tap(this.record);
  }

  /** Takes one feed event; bound, so it can be handed to a feed as it is. */
  readonly record: FeedTap = (org, job, e) => {
    const key = `${org}\u0000${job}`;
    switch (e.event) {
      case 'start':
        this.started.inc({ org });
        this.inFlight.set(key, { startedAt: e.at, votingTimedOut: false, votingEnded: false });
        break;
      case 'quorum_vote':
        // Reference 5.4: the voting timeout turns every node still undecided into a `voting_timeout` vote.
        if (e.data.status === 'voting_timeout') {
          const j = this.inFlight.get(key);
          if (j) j.votingTimedOut = true;
        }
        break;
      case 'quorum_succeeded':
        this.votingEnded(key, e.at);
        break;
      case 'wave_start':
        this.wavesStarted.inc({ org });
        break;
      case 'wave_end':
        this.wavesEnded.inc({ org, status: waveEndSchema.safeParse(e.data.status).data ?? 'other' });
        break;
      case 'job_complete': {
        const parsed = endStatusSchema.safeParse(e.data.status);
        const status = parsed.success ? parsed.data : 'other';
        // A quorum that failed ends voting and the job at once.
        if (status === 'quorum_failed') this.votingEnded(key, e.at);
        this.finished.inc({ org, status });
        if (status === 'max_failures_exceeded') this.halted.inc({ org });
        const j = this.inFlight.get(key);
        this.inFlight.delete(key);
        // A job resumed after a restart was started by another process: its start time is not known here.
        if (j) this.duration.observe({ status }, Math.max(0, e.at - j.startedAt) / 1000);
        break;
      }
    }
  };

  private votingEnded(key: string, at: number): void {
    const j = this.inFlight.get(key);
    if (!j || j.votingEnded) return;
    j.votingEnded = true;
    if (!j.votingTimedOut) this.voting.observe(Math.max(0, at - j.startedAt) / 1000);
  }
}
