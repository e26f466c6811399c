// `cli job start` (spec 4.4; reference 8): the job body (job-body.ts) POSTed, the wait with its progress line,
// and the report. Success means the job completed and every node succeeded.
import { jobCreatedSchema } from '../api/push-jobs.js';
import type { Cli } from './cli-connection.js';
import { jobBody } from './job-body.js';
import type { JobBodyOptions } from './job-options.js';
import { formatJobReport, jobFailure } from './job-report.js';
import { waitForJob, type WaitOptions } from './job-watch.js';
import { CommandError } from './terminal.js';
import { ProgressPrinter } from './progress.js';

/** Seconds between polls; fractions allowed. */
export function parsePollInterval(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw CommandError.usage(`--poll-interval: '${text}' is not a number of seconds greater than 0`);
  }
  return value;
}

export interface JobStartOptions extends JobBodyOptions {
  nowait: boolean;
  pollSeconds: number;
  verbose: boolean;
}

export async function jobStart(cli: Cli, o: JobStartOptions): Promise<void> {
  const json = cli.ui.format === 'json';
  const body = await jobBody(cli, o);
  const started = await cli.api.call('POST', cli.api.orgPath('pushy', 'jobs'), jobCreatedSchema, body);
  // With -F json, stdout carries only the JSON document; the rest goes to stderr.
  const say = json ? (text: string) => cli.ui.info(text) : (text: string) => cli.ui.msg(text);
  if (o.nowait) {
    if (json) cli.ui.output(started);
    else say(`Started.  Job ID: ${started.id}`);
    return;
  }
  say(`Started.  Job ID: ${started.id}`);
  await watchJob(cli, started.id, o);
}

/** `cli job watch`, and the wait of `cli job start`: progress while the job runs, then its report. */
export async function watchJob(cli: Cli, id: string, o: WaitOptions): Promise<void> {
  const json = cli.ui.format === 'json';
  const job = await waitForJob(cli, id, o, new ProgressPrinter(json ? cli.stderr : cli.stdout));
  if (json) cli.ui.output(job);
  else cli.ui.raw(formatJobReport(job));
  const failure = jobFailure(job);
  if (failure !== null) throw new CommandError(failure);
}
