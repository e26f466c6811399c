// REST helpers of the push-jobs integration tests: start a job, read it back, wait for a status, and the
// transport figures of GET /_status. Each throws with the server's answer when it is not the expected one.
import { jobCreatedSchema, jobSchema, type JobBody, type JobStartBody } from '../../src/api/push-jobs.js';
import { isFinished, type JobStatus } from '../../src/push/job-states.js';
import { serverStatusSchema, type ServerStatusBody } from '../../src/api/status-schema.js';
import type { ApiClient } from '../../src/auth/api-client.js';
import type { TestServer } from './server.js';
import { poll } from './test-node.js';

/** Starts a job and returns its id. */
export async function startJob(by: ApiClient, body: JobStartBody, org = 'default'): Promise<string> {
  const res = await by.request('POST', `/organizations/${org}/pushy/jobs`, body);
  if (res.status !== 201) throw new Error(`starting a job: ${res.status} ${JSON.stringify(res.body)}`);
  return jobCreatedSchema.parse(res.body).id;
}

export async function getJob(by: ApiClient, id: string, org = 'default'): Promise<JobBody> {
  const res = await by.request('GET', `/organizations/${org}/pushy/jobs/${id}`);
  if (res.status !== 200) throw new Error(`job ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return jobSchema.parse(res.body);
}

/** Polls the job until `until` holds (a status name, or a check of the whole job); the error shows the last view. */
export async function waitForJob(
  by: ApiClient,
  id: string,
  until: JobStatus | ((job: JobBody) => boolean),
  org = 'default',
): Promise<JobBody> {
  const holds = typeof until === 'string' ? (job: JobBody) => job.status === until : until;
  let last = '';
  try {
    return await poll(`job ${id} to be ${typeof until === 'string' ? until : 'as expected'}`, async () => {
      const job = await getJob(by, id, org);
      last = JSON.stringify(job);
      return holds(job) ? job : undefined;
    });
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : String(e)}; last seen ${last}`, { cause: e });
  }
}

/** Polls the job until it has finished (spec 3.1), whichever way. */
export function waitForEnd(by: ApiClient, id: string, org = 'default'): Promise<JobBody> {
  return waitForJob(by, id, (job) => isFinished(job.status), org);
}

/** GET /_status push_jobs: nodes connected now, and dropped messages by reason since the server started. */
export async function pushStatus(server: TestServer): Promise<NonNullable<ServerStatusBody['push_jobs']>> {
  const res = await fetch(new URL('/_status', server.url));
  const pushJobs = serverStatusSchema.parse(await res.json()).push_jobs;
  if (pushJobs === null) throw new Error('GET /_status shows no push-jobs transport');
  return pushJobs;
}
