// The cli as a child process for end-to-end tests: a runner bound to one config.rb and a private HOME, the
// job id from `job start`, a job's JSON through `job status -F json`, and a failure text showing the whole run.
import { jobSchema, type JobBody } from '../../src/api/push-jobs.js';
import { isFinished, type JobStatus } from '../../src/push/job-states.js';
import { runBin, childEnv, type RunResult } from './process-run.js';
import { until } from './deadline.js';

export type CliRun = (args: readonly string[], timeoutMs?: number) => Promise<RunResult>;

/** Runs `cli ARGS -c CONFIG` in `cwd` with HOME set to `home`, so no user configuration leaks in. */
export function cliWith(configFile: string, cwd: string, home: string): CliRun {
  const env = childEnv({ HOME: home });
  return (args, timeoutMs = 30_000) => runBin('cli', [...args, '-c', configFile], { cwd, env, timeoutMs });
}

/** A failure message holding everything the run printed. */
export const show = (r: RunResult): string => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

/** The id of `Started.  Job ID: ID`, or '' when the run printed none. */
export const jobIdOf = (r: RunResult): string =>
  /Started\. {2}Job ID: ([0-9a-f]+)/.exec(r.stdout + r.stderr)?.[1] ?? '';

/** `cli job status ID -F json`, parsed. */
export async function cliJob(cli: CliRun, id: string): Promise<JobBody> {
  const r = await cli(['job', 'status', id, '-F', 'json']);
  if (r.code !== 0) throw new Error(`cli job status ${id} failed: ${show(r)}`);
  return jobSchema.parse(JSON.parse(r.stdout));
}

/** Polls `cli job status` until the job is in `status` (any finished status when omitted). */
export function cliWaitForJob(cli: CliRun, id: string, status?: JobStatus, timeoutMs = 20_000): Promise<JobBody> {
  return until(
    `job ${id} to be ${status ?? 'finished'}`,
    async () => {
      const job = await cliJob(cli, id);
      return (status === undefined ? isFinished(job.status) : job.status === status) ? job : undefined;
    },
    timeoutMs,
  );
}
