// `cli job list`, `job status`, `job output` and `job abort` (spec 4.1, 4.4; reference 8).
import { jobListSchema, jobSchema, type JobSummaryBody } from '../api/push-jobs.js';
import type { Cli } from './cli-connection.js';
import { formatColumns } from './columns.js';
import { formatJobReport } from './job-report.js';

export const OUTPUT_CHANNELS = ['stdout', 'stderr'] as const;
export type OutputChannel = (typeof OUTPUT_CHANNELS)[number];

export function formatJobList(jobs: readonly JobSummaryBody[]): string {
  return formatColumns(
    ['Job ID', 'Status', 'Created_at', 'Command'],
    jobs.map((j) => [j.id, j.status, j.created_at, j.command]),
  );
}

/** Newest first, as the server lists them. */
export async function jobList(cli: Cli): Promise<void> {
  const jobs = await cli.api.call('GET', cli.api.orgPath('pushy', 'jobs'), jobListSchema);
  if (cli.ui.format === 'json') cli.ui.output(jobs);
  else if (jobs.length === 0) cli.ui.info('No jobs.');
  else cli.ui.raw(formatJobList(jobs));
}

export async function jobStatus(cli: Cli, o: { id: string }): Promise<void> {
  const job = await cli.api.call('GET', cli.api.orgPath('pushy', 'jobs', o.id), jobSchema);
  if (cli.ui.format === 'json') cli.ui.output(job);
  else cli.ui.raw(formatJobReport(job));
}

/** The captured bytes exactly as the node sent them; a cut output is said on stderr (reference 10.2, knife-push#62). */
export async function jobOutput(cli: Cli, o: { id: string; node: string; channel: OutputChannel }): Promise<void> {
  const res = await cli.api.getRaw(cli.api.orgPath('pushy', 'jobs', o.id, 'output', o.node, o.channel));
  const truncated = res.headers.get('x-output-truncated') === 'true';
  if (cli.ui.format === 'json') {
    cli.ui.output({ id: o.id, node: o.node, channel: o.channel, output: res.bytes.toString('utf8'), truncated });
    return;
  }
  cli.stdout.write(res.bytes);
  if (truncated) cli.ui.warn(`the ${o.channel} of ${o.node} was truncated: the node sent only its first part.`);
}

/** Stops a voting or running job (spec 3.1 aborted); a finished job cannot be aborted (409). */
export async function jobAbort(cli: Cli, o: { id: string }): Promise<void> {
  const job = await cli.api.call('POST', cli.api.orgPath('pushy', 'jobs', o.id, 'abort'), jobSchema);
  if (cli.ui.format === 'json') {
    cli.ui.output(job);
    return;
  }
  cli.ui.msg(`Abort sent.  Job ID: ${job.id}`);
  cli.ui.raw(formatJobReport(job));
}
