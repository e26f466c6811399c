// When a schedule fires: its cron expression read in its time zone, through croner (a maintained parser; cron is
// full of corners, from day-of-month against weekday to the hour a clock change skips). Pure functions of times in
// ms, so the schedules' timing is tested on a manual clock.
import { Cron } from 'croner';

function cronOf(cron: string, timeZone: string): Cron {
  // Paused: croner only computes occurrences here; the schedules arm their own timers.
  return new Cron(cron, { timezone: timeZone, paused: true });
}

/** Why a schedule's expression or time zone cannot be used, naming the field (a 400's message); null when both can. */
export function cronProblem(cron: string, timeZone: string, now: number): string | null {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    return `Field 'time_zone' invalid: unknown time zone '${timeZone}'`;
  }
  let next: Date | null;
  try {
    next = cronOf(cron, timeZone).nextRun(new Date(now));
  } catch (e) {
    return `Field 'cron' invalid: ${e instanceof Error ? e.message.replace(/^CronPattern: /, '') : String(e)}`;
  }
  return next === null ? `Field 'cron' invalid: '${cron}' never fires` : null;
}

/** The first occurrence strictly after `after` (ms), or null when there is none. */
export function nextOccurrence(cron: string, timeZone: string, after: number): number | null {
  return cronOf(cron, timeZone).nextRun(new Date(after))?.getTime() ?? null;
}

/**
 * The occurrences after `after` up to `through` (ms, both included as times): the latest, and how many there were.
 * A server away for a year on a per-second schedule must not count them one by one: past `limit` the count stops.
 */
export function occurrencesBetween(
  cron: string,
  timeZone: string,
  after: number,
  through: number,
  limit = 10_000,
): { count: number; latest: number | null } {
  const c = cronOf(cron, timeZone);
  const latest = c.previousRuns(1, new Date(through + 1))[0]?.getTime() ?? null;
  if (latest === null || latest <= after) return { count: 0, latest: null };
  let count = 0;
  for (let t = c.nextRun(new Date(after)); t !== null && t.getTime() <= latest && count < limit; t = c.nextRun(t))
    count += 1;
  return { count, latest };
}
