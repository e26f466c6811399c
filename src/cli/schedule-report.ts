// What the cli says about schedules (src/api/schedules.ts): the table of `schedule list`, and the fields and latest
// jobs of `schedule show`, which `add` prints too.
import type { ScheduleBody } from '../api/schedules.js';
import { formatColumns, formatFields } from './columns.js';

export function formatScheduleList(schedules: readonly ScheduleBody[]): string {
  return formatColumns(
    ['Name', 'Cron', 'Time zone', 'Status', 'Next run', 'Last job'],
    schedules.map((s) => [
      s.name,
      s.cron,
      s.time_zone,
      s.paused ? 'paused' : 'active',
      s.next_run_at ?? '-',
      s.jobs[0]?.id ?? '-',
    ]),
  );
}

/** The schedule's fields, then its latest jobs, newest first. */
export function formatSchedule(s: ScheduleBody): string {
  const fields = formatFields([
    ['Name', s.name],
    ['Command', s.job.command],
    ['Nodes', s.job.nodes.join(', ')],
    ['Cron', s.cron],
    ['Time zone', s.time_zone],
    // prohibit_overlap: a firing is skipped while the job of the one before still runs.
    ['Overlap', s.prohibit_overlap ? 'prohibited' : 'allowed'],
    ['Paused', s.paused ? 'yes' : 'no'],
    ['Next run', s.next_run_at ?? '(none)'],
    ['skipped_overlap', String(s.skipped_overlap)],
    ['missed', String(s.missed)],
    ['Requestor', s.requestor],
    ['Created_at', s.created_at],
  ]);
  if (s.jobs.length === 0) return `${fields}\nNo jobs yet.\n`;
  return `${fields}\n${formatColumns(
    ['Job ID', 'Occurrence'],
    s.jobs.map((j) => [j.id, j.occurrence]),
  )}`;
}
