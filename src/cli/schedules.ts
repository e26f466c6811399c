// `cli schedule add|list|show|delete|pause|resume`: a job body fired on a cron expression, through
// /organizations/ORG/pushy/schedules. The server checks the expression and the time zone; its 400 names the field.
import { scheduleListSchema, scheduleSchema, type ScheduleBody } from '../api/schedules.js';
import type { Cli } from './cli-connection.js';
import { jobBody } from './job-body.js';
import { type ScheduleAddOptions, scheduleBody } from './schedule-options.js';
import { formatSchedule, formatScheduleList } from './schedule-report.js';

const schedulesPath = (cli: Cli, ...segments: string[]): string => cli.api.orgPath('pushy', 'schedules', ...segments);

function print(cli: Cli, s: ScheduleBody): void {
  if (cli.ui.format === 'json') cli.ui.output(s);
  else cli.ui.raw(formatSchedule(s));
}

/** A search runs now: the schedule keeps the names it found. */
export async function scheduleAdd(cli: Cli, o: ScheduleAddOptions): Promise<void> {
  const body = scheduleBody(o, await jobBody(cli, o.job));
  print(cli, await cli.api.call('POST', schedulesPath(cli), scheduleSchema, body));
}

/** By name, as the server lists them. */
export async function scheduleList(cli: Cli): Promise<void> {
  const schedules = await cli.api.call('GET', schedulesPath(cli), scheduleListSchema);
  if (cli.ui.format === 'json') cli.ui.output(schedules);
  else if (schedules.length === 0) cli.ui.info('No schedules.');
  else cli.ui.raw(formatScheduleList(schedules));
}

export async function scheduleShow(cli: Cli, o: { name: string }): Promise<void> {
  print(cli, await cli.api.call('GET', schedulesPath(cli, o.name), scheduleSchema));
}

const SCHEDULE_CHANGES = { delete: 'deleted', pause: 'paused', resume: 'resumed' } as const;
export type ScheduleChange = keyof typeof SCHEDULE_CHANGES;

/** Delete, pause or resume; the server answers with the schedule as it now is (or was, deleted). */
export async function scheduleChange(cli: Cli, o: { name: string; change: ScheduleChange }): Promise<void> {
  const s =
    o.change === 'delete'
      ? await cli.api.call('DELETE', schedulesPath(cli, o.name), scheduleSchema)
      : await cli.api.call('POST', schedulesPath(cli, o.name, o.change), scheduleSchema);
  if (cli.ui.format === 'json') cli.ui.output(s);
  else cli.ui.msg(`Schedule ${s.name} ${SCHEDULE_CHANGES[o.change]}.`);
}
