// The time between a rollout's waves, as its nodes saw it: from the last result a node of one wave sent to the first
// commit a node of the next wave received, the pause included. Measured at the nodes, on the tester's clock, rather
// than from the feed: the feed stamps a wave's start with the time its pause was due (the previous wave's end plus
// the pause, exactly), however late its commits went out.
import { percentile, type BetweenWaves } from './figures.js';
import type { JobTally } from './ipc.js';
import type { Rollout } from './rollout.js';
import type { JobRecord } from './scenario.js';

/**
 * One job's gaps in ms, each from a wave to the next one that sent commits. A wave counts once every node of it that
 * was told to run reported: a crashed node's run ends when the server hears of it, which no node's clock tells.
 */
export function waveGaps(t: JobTally): number[] {
  const gaps: number[] = [];
  for (const [wave, w] of Object.entries(t.waves)) {
    const next = t.waves[Number(wave) + 1];
    if (next === undefined || !Number.isFinite(next.firstCommitAt) || w.runs === 0 || w.reported < w.runs) continue;
    gaps.push(next.firstCommitAt - w.lastResultAt);
  }
  return gaps;
}

/** The gaps over every job of the run, and the waves the server reported complete; null without --waves. */
export function betweenWaves(
  records: readonly JobRecord[],
  tallies: ReadonlyMap<string, JobTally>,
  rollout: Rollout | null,
): BetweenWaves | null {
  if (rollout === null) return null;
  const gaps: number[] = [];
  let complete = 0;
  for (const r of records) {
    const t = r.id === null ? undefined : tallies.get(r.id);
    if (t !== undefined) gaps.push(...waveGaps(t));
    complete += r.final?.rollout?.waves.filter((w) => w.status === 'complete').length ?? 0;
  }
  return {
    p50: percentile(gaps, 50),
    max: percentile(gaps, 100),
    gaps: gaps.length,
    waves_complete: complete,
    pause_s: rollout.pause ?? 0,
  };
}
