// The push job's data: statuses (spec 3.1, 3.2), the persisted snapshot's schema, and the events and
// effects the job machine takes and returns.
import { z } from 'zod';
import { JOB_STATUSES, NODE_JOB_STATUSES, type JobStatus, type NodeJobStatus } from '../../src/push/job-states.js';
import type { JobNote } from '../../src/api/job-feed.js';
import { failureBudgetSchema, WAVE_STATUSES } from '../../src/api/rollout.js';
import type { NodeAnswerType } from '../../src/protocol/messages.js';

export type { JobStatus, NodeJobStatus };

export const jobOptionsSchema = z.object({
  user: z.string().optional(),
  dir: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  file: z.string().optional(),
  capture: z.boolean().optional(),
});
export type JobOptions = z.infer<typeof jobOptionsSchema>;

const epochMs = z.number().int().nonnegative();

/** One wave of a rollout: its quorum within it, and how it went. Its nodes follow from the sizes (rollout-plan.ts). */
const waveStateSchema = z.object({
  status: z.enum(WAVE_STATUSES),
  quorum: z.number().int().nonnegative(),
  started_at: epochMs.nullable(),
  ended_at: epochMs.nullable(),
});
export type WaveState = z.infer<typeof waveStateSchema>;

/** A job in waves (src/api/rollout.ts): the plan, as resolved when the job was made, and where it stands. */
export const rolloutStateSchema = z.object({
  /** Each wave's node count, in order; the waves take the job's nodes by name. */
  sizes: z.array(z.number().int().positive()).min(1),
  waves: z.array(waveStateSchema).min(1),
  max_failures: failureBudgetSchema.nullable(),
  pause: z.number().int().nonnegative(), // seconds
  /** The wave that runs or ran last, 1 for the first; 0 before the job starts. */
  current: z.number().int().nonnegative(),
  /** When the next wave starts, while the job pauses between waves. */
  next_wave_at: epochMs.nullable(),
});
export type RolloutState = z.infer<typeof rolloutStateSchema>;

/** The persisted snapshot. Parse a stored one with this schema, then step it with `restored`. */
export const jobStateSchema = z.object({
  id: z.string(),
  command: z.string(),
  options: jobOptionsSchema,
  run_timeout: z.number().nonnegative(), // seconds
  voting_timeout: z.number().positive(), // seconds
  quorum: z.number().int().nonnegative(), // ready nodes needed, already resolved by resolveQuorum
  /** Who started the job (the feed's `start` event names them). */
  requestor: z.string().optional(),
  status: z.enum(JOB_STATUSES),
  nodes: z.record(z.string(), z.enum(NODE_JOB_STATUSES)),
  counts: z.record(z.enum(NODE_JOB_STATUSES), z.number().int().nonnegative()),
  exit_status: z.record(z.string(), z.number().int()),
  /** When each node entered its present status (the cli's "last updated" column). */
  node_updated_at: z.record(z.string(), epochMs).default({}),
  created_at: epochMs,
  updated_at: epochMs, // when the job entered its present status (spec 2.4)
  voting_deadline: epochMs.nullable(),
  run_deadline: epochMs.nullable(),
  /** Present for a job in waves; `quorum`, the deadlines and `status` are then the current wave's. */
  rollout: rolloutStateSchema.optional(),
  /** Present for a job a schedule started: its name, and the occurrence the job is for. */
  schedule: z.object({ name: z.string(), occurrence: epochMs }).optional(),
});
export type JobState = z.infer<typeof jobStateSchema>;

export type NodeAnswer = NodeAnswerType;
/** A job's deadlines: its (current wave's) voting and run, and a rollout's pause between waves. */
export type JobTimer = 'voting' | 'run' | 'wave';
export type NodeEventType = NodeAnswer | 'node_down';

export type JobEvent =
  | { type: 'start'; at: number; available: ReadonlySet<string> }
  | { type: NodeAnswer; at: number; node: string; exit_status?: number; output?: boolean }
  | { type: 'node_down'; at: number; node: string }
  /**
   * The node was heard at a gateway it had not been heard at (it moved, or came back): a commit sent to it before
   * may have gone to the channels it left.
   */
  | { type: 'node_reached'; at: number; node: string }
  | { type: 'voting_timeout' | 'run_timeout'; at: number } // `at` is the deadline the timer was armed for
  /**
   * A rollout's pause is over (`due`: when it was to end, as the timer was armed; `at`: now, which the wave's start
   * is stamped with): the next wave starts, on its nodes `available` now.
   */
  | { type: 'next_wave'; at: number; due: number; available: ReadonlySet<string> }
  | { type: 'abort'; at: number }
  | { type: 'restored'; at: number; available: ReadonlySet<string> }
  /** The job actor threw (a broken invariant): the job ends `crashed` and lets its nodes go. */
  | { type: 'crash'; at: number };

export type IgnoreReason =
  | 'unknown_node'
  | 'not_started'
  | 'already_started'
  | 'duplicate_answer'
  | 'late_answer'
  | 'stale_timer'
  | 'already_finished';

export type JobEffect =
  | { type: 'save_output'; node: string }
  /** `job`: the job-level fields changed; `nodes`: the nodes whose status changed. */
  | { type: 'persist'; job: boolean; nodes: string[] }
  /** What the job's feed tells its readers about this step, in order. */
  | { type: 'feed'; at: number; notes: JobNote[] }
  | {
      type: 'send';
      message: 'commit';
      nodes: string[];
      job_id: string;
      command: string;
      options: JobOptions;
      run_timeout: number;
      /** The voting deadline: until then the transport writes the commit again to a node that has not answered it. */
      vote_by: number;
    }
  | { type: 'send'; message: 'run' | 'abort'; nodes: string[]; job_id: string }
  | { type: 'arm'; timer: JobTimer; at: number }
  | { type: 'finished'; status: JobStatus }
  | { type: 'ignored'; reason: IgnoreReason; event: JobEvent['type']; node?: string }
  | { type: 'rejected'; error: 'job_finished' | 'not_started'; status: JobStatus };

export interface JobStep {
  state: JobState;
  effects: JobEffect[];
}
