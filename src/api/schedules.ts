// Schedules (/organizations/ORG/pushy/schedules): a job body, waves included, started on a cron expression in a
// time zone. One schema for what a caller sends and one for what GET shows; the server, the cli and the tests read
// them here. Each firing starts an ordinary job, listed under its schedule.
import { z } from 'zod';
import { httpDateSchema } from './http-date.js';
import { jobStartSchema } from './push-jobs.js';

const SCHEDULE_NAME = /^[A-Za-z0-9_.:-]{1,255}$/;

/** The most job ids a schedule keeps: the latest ones. */
export const MAX_KEPT_JOBS = 100;

/** POST .../pushy/schedules. Unknown fields are refused. */
export const scheduleCreateSchema = z.strictObject({
  name: z.string().regex(SCHEDULE_NAME),
  /** The job each firing starts, as POST .../pushy/jobs takes it. */
  job: jobStartSchema,
  /** Five fields (minute hour day month weekday), or six with seconds first. */
  cron: z.string().min(1).max(255),
  /** An IANA time zone (`Europe/Paris`) the expression is read in. */
  time_zone: z.string().min(1).max(64).default('UTC'),
  /** Skip a firing while the job of the one before still runs (counted as `skipped_overlap`). */
  prohibit_overlap: z.boolean().default(true),
  /** How many of its latest jobs the schedule lists. */
  keep_jobs: z.int().min(1).max(MAX_KEPT_JOBS).default(10),
});
export type ScheduleCreateBody = z.input<typeof scheduleCreateSchema>;
export type ScheduleCreate = z.infer<typeof scheduleCreateSchema>;

/** One job a firing started. */
export const scheduledJobSchema = z.object({
  id: z.string(),
  /** The occurrence it was started for (the time the expression named). */
  occurrence: httpDateSchema,
});

/** GET .../pushy/schedules/NAME, and the answers of create, pause, resume and delete. */
export const scheduleSchema = z.object({
  name: z.string(),
  job: jobStartSchema,
  cron: z.string(),
  time_zone: z.string(),
  prohibit_overlap: z.boolean(),
  keep_jobs: z.int().positive(),
  paused: z.boolean(),
  /** Who created it: each job it starts is theirs. */
  requestor: z.string(),
  created_at: httpDateSchema,
  updated_at: httpDateSchema,
  /** The next occurrence it will fire for; null while paused. */
  next_run_at: httpDateSchema.nullable(),
  /** Its latest jobs, newest first. */
  jobs: z.array(scheduledJobSchema),
  /** Firings skipped because the job before still ran. */
  skipped_overlap: z.int().nonnegative(),
  /** Occurrences that passed while no process served the organization, later than schedule_catchup to fire. */
  missed: z.int().nonnegative(),
});
export type ScheduleBody = z.infer<typeof scheduleSchema>;

/** GET .../pushy/schedules: every schedule, by name. */
export const scheduleListSchema = z.array(scheduleSchema);
