// The tester's own model of a rollout (--waves, --max-failures, --pause): the waves' sizes and each node's wave,
// worked out from the job's body as the server plans it (actors/push/rollout-plan.ts), so that what the server
// reports is held against a plan it did not make. The outcome a job in waves must have is rollout-expected.ts.
import type { JobStartBody } from '../api/push-jobs.js';
import { PERCENT, type WaveSize } from '../api/rollout.js';

export type Rollout = NonNullable<JobStartBody['rollout']>;

/** The percentage a size such as `10%` names. */
export const percentOf = (size: string): number => Number(PERCENT.exec(size)?.[1]);

/**
 * The nodes each wave takes, in order: each listed size in turn (a count, or a percentage of all the job's nodes
 * rounded up), the last repeated, until every node is taken. Fewer sizes than listed waves means the server refuses
 * the job: its early waves already take every node.
 */
export function waveSizes(waves: readonly WaveSize[], nodeCount: number): number[] {
  const sizes: number[] = [];
  for (let left = nodeCount, i = 0; left > 0; i += 1) {
    const size = waves[Math.min(i, waves.length - 1)] as WaveSize;
    const wanted = typeof size === 'number' ? size : Math.ceil((percentOf(size) * nodeCount) / 100);
    sizes.push(Math.min(Math.max(1, wanted), left));
    left -= sizes.at(-1) as number;
  }
  return sizes;
}

/**
 * Each node's wave (1 for the first) in the jobs it takes part in, 0 for none. A job's nodes are those of its
 * --concurrency slot, and the server takes each wave's by name: the cast's names are padded to one width, so by
 * name is by index.
 */
export function nodeWaves(nodes: number, jobNodes: number, slots: number, sizes: readonly number[]): number[] {
  const inJob = sizes.flatMap((size, i) => Array<number>(size).fill(i + 1));
  return Array.from({ length: nodes }, (_, i) => (i < slots * jobNodes ? (inJob[i % jobNodes] ?? 0) : 0));
}
