// The jobs' figures: each job's end held against what its nodes and quorum made expected, and where its time went,
// from the tester's record of it beside its nodes' tally (when each node committed, acked, ran and reported).
import type { JobStatus } from '../push/job-states.js';
import { medians, spread, type Figures, type JobPhases, type Mismatch } from './figures.js';
import type { JobTally } from './ipc.js';
import type { JobRecord } from './scenario.js';

export type JobFigures = Pick<
  Figures,
  | 'jobs_by_status'
  | 'commit_to_all_acked_ms'
  | 'post_to_running_ms'
  | 'post_to_complete_ms'
  | 'job_phases_ms'
  | 'quorum_outcomes_correct'
>;

type Outcome = JobStatus | 'unfinished' | 'not_started';

function outcomeOf(r: JobRecord): Outcome {
  return r.id === null ? 'not_started' : (r.final?.status ?? 'unfinished');
}

function mismatchOf(r: JobRecord, got: Outcome): Mismatch {
  const e = r.expectation;
  const nodes: Record<string, number> = {};
  for (const [status, list] of Object.entries(r.final?.nodes ?? {})) nodes[status] = list.length;
  return {
    job: r.id ?? `(not started: ${r.error ?? 'no answer'})`,
    expected: e.statuses,
    got,
    quorum: e.quorum,
    ready_min: e.readyMin,
    ready_max: e.readyMax,
    nodes,
  };
}

/** The times between a job's steps, in the order they come. */
class Timings {
  readonly acked: number[] = [];
  readonly toRunning: number[] = [];
  readonly toComplete: number[] = [];
  readonly phases: Record<keyof JobPhases, number[]> = {
    post_to_first_commit: [],
    commit_fan_out: [],
    last_commit_to_last_ack: [],
    last_ack_to_first_run: [],
    run_fan_out: [],
    last_run_to_last_result: [],
    last_result_to_seen_finished: [],
  };

  add(r: JobRecord, t: JobTally | undefined): void {
    // Phases and the time to all acked over the jobs every node of which acked, as job_phases_ms says. A job in waves
    // votes and runs once a wave, so its first commit and last ack, or last ack and first run, are waves apart:
    // between_waves_ms times it instead.
    const inWaves = t !== undefined && Object.keys(t.waves).length > 0;
    if (t !== undefined && !inWaves && t.acks > 0 && t.acks === r.expectation.readyMax) this.addPhases(r, t);
    if (t !== undefined && t.runs > 0) this.toRunning.push(t.firstRunAt - r.postedAt);
    if (r.final?.status === 'complete' && r.finishedAt !== null) this.toComplete.push(r.finishedAt - r.postedAt);
  }

  private addPhases(r: JobRecord, t: JobTally): void {
    const phases = this.phases;
    this.acked.push(t.lastAckAt - t.firstCommitAt);
    phases.post_to_first_commit.push(t.firstCommitAt - r.postedAt);
    phases.commit_fan_out.push(t.lastCommitAt - t.firstCommitAt);
    phases.last_commit_to_last_ack.push(t.lastAckAt - t.lastCommitAt);
    if (t.runs === 0) return;
    phases.last_ack_to_first_run.push(t.firstRunAt - t.lastAckAt);
    phases.run_fan_out.push(t.lastRunAt - t.firstRunAt);
    if (t.lastResultAt > 0) phases.last_run_to_last_result.push(t.lastResultAt - t.lastRunAt);
    if (t.lastResultAt > 0 && r.finishedAt !== null)
      phases.last_result_to_seen_finished.push(r.finishedAt - t.lastResultAt);
  }
}

export function jobFigures(records: readonly JobRecord[], tallies: ReadonlyMap<string, JobTally>): JobFigures {
  const byStatus: Record<string, number> = {};
  const mismatches: Mismatch[] = [];
  const timings = new Timings();
  let correct = 0;
  let ambiguous = 0;
  for (const r of records) {
    const got = outcomeOf(r);
    byStatus[got] = (byStatus[got] ?? 0) + 1;
    const e = r.expectation;
    if (e.statuses.length > 1) ambiguous += 1;
    if (got !== 'unfinished' && got !== 'not_started' && e.statuses.includes(got)) correct += 1;
    else mismatches.push(mismatchOf(r, got));
    timings.add(r, r.id === null ? undefined : tallies.get(r.id));
  }
  return {
    jobs_by_status: byStatus,
    commit_to_all_acked_ms: spread(timings.acked),
    post_to_running_ms: spread(timings.toRunning),
    post_to_complete_ms: spread(timings.toComplete),
    job_phases_ms: medians(timings.phases),
    quorum_outcomes_correct: { correct, total: records.length, ambiguous, mismatches },
  };
}
