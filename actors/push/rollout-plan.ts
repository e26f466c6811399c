// A rollout's plan, pure: how many nodes each wave takes, which nodes those are, and whether the failures so far
// have spent the budget. The job machine (job-machine.ts) steps through the waves; this only counts.
import { FAILED_RUNS } from '../../src/api/job-view.js';
import { PERCENT, type FailureBudget, type RolloutRequest, type WaveSize } from '../../src/api/rollout.js';
import type { NodeJobStatus } from '../../src/push/job-states.js';
import type { RolloutState } from './job-model.js';

/** Why a rollout cannot be planned, naming the field at fault (a 400's message). */
export class RolloutError extends Error {
  override name = 'RolloutError';
}

/** A count, or a percentage of `of` rounded up. */
function share(size: number | string, of: number): number {
  if (typeof size === 'number') return size;
  return Math.ceil((Number(PERCENT.exec(size)?.[1]) * of) / 100);
}

/**
 * The nodes each wave takes, in order, until `nodeCount` nodes are taken: each listed size in turn (a percentage of
 * every node of the job, rounded up), the last repeated. Every listed wave must get a node: a plan whose early
 * waves already take every node names waves that would never run, which is a mistake worth a 400.
 */
export function waveSizes(waves: readonly WaveSize[], nodeCount: number): number[] {
  const sizes: number[] = [];
  let left = nodeCount;
  for (let i = 0; left > 0; i += 1) {
    const size = Math.min(Math.max(1, share(waves[Math.min(i, waves.length - 1)] as WaveSize, nodeCount)), left);
    sizes.push(size);
    left -= size;
  }
  if (sizes.length < waves.length)
    throw new RolloutError(
      `Field 'rollout.waves' invalid: ${waves.length} waves need more nodes than the ${nodeCount} of the job`,
    );
  return sizes;
}

/**
 * The rollout of a job of `nodeCount` nodes, before its first wave. `quorumOf` resolves the job's quorum within a
 * wave of the given size: it counts inside each wave, so a count no wave could reach is refused.
 */
export function planRollout(
  request: RolloutRequest,
  nodeCount: number,
  quorumOf: (waveSize: number) => number,
): RolloutState {
  const sizes = waveSizes(request.waves, nodeCount);
  const waves = sizes.map((size, i) => {
    const quorum = quorumOf(size);
    if (quorum > size)
      throw new RolloutError(
        `Field 'quorum' invalid: ${quorum} is more than the ${size} nodes of wave ${i + 1}; a percentage counts in each wave`,
      );
    return { status: 'pending' as const, quorum, started_at: null, ended_at: null };
  });
  return {
    sizes,
    waves,
    max_failures: request.max_failures ?? null,
    pause: request.pause ?? 0,
    current: 0,
    next_wave_at: null,
  };
}

/** The nodes of wave `index` (0 for the first): the job's nodes by name, in runs of the waves' sizes. */
export function waveNodes(sorted: readonly string[], sizes: readonly number[], index: number): string[] {
  let from = 0;
  for (let i = 0; i < index; i += 1) from += sizes[i] as number;
  return sorted.slice(from, from + (sizes[index] as number));
}

/** How many of the nodes that ran failed. */
export function failuresOf(counts: Readonly<Record<NodeJobStatus, number>>): { failures: number; ran: number } {
  let failures = 0;
  for (const status of FAILED_RUNS) failures += counts[status];
  return { failures, ran: failures + counts.succeeded };
}

/** Whether the failures have passed the budget: more than the count, or than the share of the nodes that ran. */
export function budgetSpent(budget: FailureBudget | null, failures: number, ran: number): boolean {
  if (budget === null) return false;
  if (typeof budget === 'number') return failures > budget;
  return failures * 100 > Number(PERCENT.exec(budget)?.[1]) * ran;
}
