// A job's rollout, as POST .../pushy/jobs takes it and GET .../jobs/ID shows it: the job runs in waves, each voting
// and running as a whole job does, a wave starting once the one before it ended and the pause passed, and none
// starting once the failures passed the budget. One schema for the request part and one for the view.
import { z } from 'zod';
import { httpDateSchema } from './http-date.js';

/** `10%`, `2.5%`: a share of the job's nodes (of a wave's, for a quorum; of those that ran, for a budget). */
export const PERCENT = /^(\d+(?:\.\d+)?)%$/;

const percentOf = (least: number) =>
  z
    .string()
    .regex(PERCENT, 'a count or a percentage such as 10%')
    .refine((s) => {
      const n = Number(PERCENT.exec(s)?.[1]);
      return n >= least && n <= 100;
    }, `a percentage from ${least}% to 100%`);

/** A wave's size: a count of nodes, or a percentage of the job's nodes (rounded up): never 0. */
export const waveSizeSchema = z.union([
  z.int().min(1, 'a wave has at least one node'),
  percentOf(Number.MIN_VALUE).refine((s) => Number(PERCENT.exec(s)?.[1]) > 0, 'a wave has at least one node'),
]);
export type WaveSize = z.infer<typeof waveSizeSchema>;

/** How many failures the rollout takes before it starts no further wave: a count, or a share of the nodes that ran. */
export const failureBudgetSchema = z.union([z.int().nonnegative(), percentOf(0)]);
export type FailureBudget = z.infer<typeof failureBudgetSchema>;

/** The longest pause between waves, in seconds (a day). */
export const MAX_WAVE_PAUSE_S = 86_400;

/** The `rollout` of a job's POST body. Unknown fields are refused. */
export const rolloutSchema = z.strictObject({
  /** The waves' sizes in order; the last is repeated until every node ran. */
  waves: z.array(waveSizeSchema).min(1).max(1000),
  /** Past this many failures (failed, crashed, timed out or aborted nodes), no further wave starts. */
  max_failures: failureBudgetSchema.optional(),
  /** Seconds between one wave's end and the next one's start. */
  pause: z.int().nonnegative().max(MAX_WAVE_PAUSE_S).default(0),
});
export type RolloutRequest = z.infer<typeof rolloutSchema>;

/** How a wave went: `pending` before it starts, then as a job would (`complete` once every node of it ended). */
export const WAVE_STATUSES = [
  'pending',
  'voting',
  'running',
  'complete',
  'quorum_failed',
  'timed_out',
  'aborted',
  'crashed',
  'skipped',
] as const;
export type WaveStatus = (typeof WAVE_STATUSES)[number];

/** One wave in a job's JSON. */
export const waveViewSchema = z.object({
  /** 1 for the first. */
  wave: z.int().positive(),
  status: z.enum(WAVE_STATUSES),
  /** Its nodes, in the order they were picked (by name). */
  nodes: z.array(z.string()),
  quorum: z.int().nonnegative(),
  started_at: httpDateSchema.nullable(),
  ended_at: httpDateSchema.nullable(),
});
export type WaveView = z.infer<typeof waveViewSchema>;

/** The `rollout` of GET .../pushy/jobs/ID. */
export const rolloutViewSchema = z.object({
  waves: z.array(waveViewSchema),
  /** The wave that runs or ran last (1 for the first); 0 before the first starts. */
  current_wave: z.int().nonnegative(),
  max_failures: failureBudgetSchema.nullable(),
  pause: z.int().nonnegative(),
  /** Failures so far, among the nodes that ran. */
  failures: z.int().nonnegative(),
  /** When the next wave starts, while the rollout pauses between waves. */
  next_wave_at: httpDateSchema.nullable(),
});
export type RolloutView = z.infer<typeof rolloutViewSchema>;
