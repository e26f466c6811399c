// Adding up what the nodes saw of each job: in a worker between batches, and in the parent over all workers.
import type { JobTally, WaveTally } from './ipc.js';

export function emptyTally(): JobTally {
  return {
    commits: 0,
    firstCommitAt: Infinity,
    lastCommitAt: 0,
    acks: 0,
    nacks: 0,
    lastAckAt: 0,
    runs: 0,
    firstRunAt: Infinity,
    lastRunAt: 0,
    succeeded: 0,
    failed: 0,
    crashed: 0,
    lastResultAt: 0,
    waves: {},
  };
}

/** Wave `wave` of the tally, made on first use. */
export function waveTallyOf(t: JobTally, wave: number): WaveTally {
  return (t.waves[wave] ??= { firstCommitAt: Infinity, runs: 0, reported: 0, lastResultAt: 0 });
}

/** Adds `b` into `a`: counts sum, first times take the earliest, last times the latest. */
export function mergeTally(a: JobTally, b: JobTally): void {
  a.commits += b.commits;
  a.acks += b.acks;
  a.nacks += b.nacks;
  a.runs += b.runs;
  a.succeeded += b.succeeded;
  a.failed += b.failed;
  a.crashed += b.crashed;
  a.firstCommitAt = Math.min(a.firstCommitAt, b.firstCommitAt);
  a.firstRunAt = Math.min(a.firstRunAt, b.firstRunAt);
  a.lastCommitAt = Math.max(a.lastCommitAt, b.lastCommitAt);
  a.lastRunAt = Math.max(a.lastRunAt, b.lastRunAt);
  a.lastAckAt = Math.max(a.lastAckAt, b.lastAckAt);
  a.lastResultAt = Math.max(a.lastResultAt, b.lastResultAt);
  for (const [wave, w] of Object.entries(b.waves)) {
    const into = waveTallyOf(a, Number(wave));
    into.firstCommitAt = Math.min(into.firstCommitAt, w.firstCommitAt);
    into.runs += w.runs;
    into.reported += w.reported;
    into.lastResultAt = Math.max(into.lastResultAt, w.lastResultAt);
  }
}

/** The tally of `job` in `tallies`, made on first use. */
export function tallyOf(tallies: Map<string, JobTally>, job: string): JobTally {
  let t = tallies.get(job);
  if (t === undefined) {
    t = emptyTally();
    tallies.set(job, t);
  }
  return t;
}
