// `cli schedule add NAME CRON COMMAND [NODE ...]`: its own options (the time zone, overlap, how many jobs it lists)
// beside the job body's (job-options.ts), read and checked before anything is sent, and the POST body they make.
import type { JobStartBody } from '../api/push-jobs.js';
import { MAX_KEPT_JOBS, type ScheduleCreateBody } from '../api/schedules.js';
import { at, flag, type OptionSpec, str, type Values } from './framework.js';
import { JOB_BODY_OPTIONS, jobBodyOptionsOf, type JobBodyOptions } from './job-options.js';
import { CommandError } from './terminal.js';

export const SCHEDULE_ADD_OPTIONS: Record<string, OptionSpec> = {
  'time-zone': { type: 'string', arg: 'TZ', help: 'IANA time zone the expression is read in (default UTC)' },
  'allow-overlap': {
    type: 'boolean',
    help: 'fire even while the job of the firing before still runs (by default that firing is skipped)',
  },
  'keep-jobs': {
    type: 'string',
    arg: 'N',
    help: `how many of its latest jobs the schedule lists, 1 to ${MAX_KEPT_JOBS} (server default 10)`,
  },
  ...JOB_BODY_OPTIONS,
  // The nodes are the ones found now: the schedule keeps their names, and does not search again when it fires.
  search: { ...JOB_BODY_OPTIONS.search, help: 'also run on the nodes a node search finds now (their names are kept)' },
};

export interface ScheduleAddOptions {
  name: string;
  cron: string;
  job: JobBodyOptions;
  timeZone: string;
  prohibitOverlap: boolean;
  keepJobs?: number;
}

/**
 * The expression as one argument. An unquoted `0 3 * * *` reaches the cli as five arguments, the first of them
 * taken for the expression: said here, where the quoting can be named, rather than as the server's 400.
 */
export function checkCron(cron: string): string {
  if (/\s/.test(cron.trim()) || cron.trim().startsWith('@')) return cron;
  throw CommandError.usage(
    `CRON: '${cron}' is a single field; quote the whole expression as one argument, such as '0 3 * * *'`,
  );
}

export function parseKeepJobs(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < 1 || value > MAX_KEPT_JOBS) {
    throw CommandError.usage(`--keep-jobs: '${text}' is not a whole number from 1 to ${MAX_KEPT_JOBS}`);
  }
  return value;
}

/** NAME, CRON, COMMAND and the NODE arguments, with the options of SCHEDULE_ADD_OPTIONS. */
export function scheduleAddOptionsOf(args: readonly string[], v: Values): ScheduleAddOptions {
  const keepJobs = str(v, 'keep-jobs');
  return {
    name: at(args, 0),
    cron: checkCron(at(args, 1)),
    job: jobBodyOptionsOf(at(args, 2), args.slice(3), v),
    timeZone: str(v, 'time-zone') ?? 'UTC',
    prohibitOverlap: !flag(v, 'allow-overlap'),
    ...(keepJobs === undefined ? {} : { keepJobs: parseKeepJobs(keepJobs) }),
  };
}

/** The POST .../pushy/schedules body: the options around the job body made of them. */
export function scheduleBody(o: ScheduleAddOptions, job: JobStartBody): ScheduleCreateBody {
  const body: ScheduleCreateBody = {
    name: o.name,
    job,
    cron: o.cron,
    time_zone: o.timeZone,
    prohibit_overlap: o.prohibitOverlap,
  };
  if (o.keepJobs !== undefined) body.keep_jobs = o.keepJobs;
  return body;
}
