// REST helpers of the push-jobs integration tests: start a job, read it back, wait for a status, and the
// transport figures of GET /_status. Each throws with the server's answer when it is not the expected one.
import { z } from 'zod';
import type { ApiClient } from '../../src/auth/api-client.js';
import type { TestServer } from './server.js';
import { poll } from './test-node.js';

/** A job as GET /pushy/jobs/ID shows it (spec 2.4). */
const jobViewSchema = z.looseObject({
  id: z.string(), command: z.string(), run_timeout: z.number(), status: z.string(), created_at: z.string(), updated_at: z.string(),
  nodes: z.record(z.string(), z.array(z.string())),
});
export type JobView = z.infer<typeof jobViewSchema>;

const statusSchema = z.object({ push_jobs: z.object({ connected_nodes: z.number(), dropped: z.record(z.string(), z.number()) }) });

/** Starts a job and returns its id. */
export async function startJob(by: ApiClient, body: Record<string, unknown>, org = 'default'): Promise<string> {
  const res = await by.request('POST', `/organizations/${org}/pushy/jobs`, body);
  if (res.status !== 201) throw new Error(`starting a job: ${res.status} ${JSON.stringify(res.body)}`);
  return z.object({ id: z.string() }).parse(res.body).id;
}

export async function getJob(by: ApiClient, id: string, org = 'default'): Promise<JobView> {
  const res = await by.request('GET', `/organizations/${org}/pushy/jobs/${id}`);
  if (res.status !== 200) throw new Error(`job ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return jobViewSchema.parse(res.body);
}

/** Polls the job until `until` holds (a status name, or a check of the whole job); the error shows the last view. */
export async function waitForJob(by: ApiClient, id: string, until: string | ((job: JobView) => boolean), org = 'default'): Promise<JobView> {
  const holds = typeof until === 'string' ? (job: JobView) => job.status === until : until;
  let last = '';
  try {
    return await poll(`job ${id} to be ${typeof until === 'string' ? until : 'as expected'}`, async () => {
      const job = await getJob(by, id, org);
      last = JSON.stringify(job);
      return holds(job) ? job : undefined;
    });
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : String(e)}; last seen ${last}`);
  }
}

const FINISHED = new Set(['complete', 'quorum_failed', 'crashed', 'timed_out', 'aborted']);

/** Polls the job until it has finished (spec 3.1), whichever way. */
export function waitForEnd(by: ApiClient, id: string, org = 'default'): Promise<JobView> {
  return waitForJob(by, id, (job) => FINISHED.has(job.status), org);
}

/** GET /_status push_jobs: nodes connected now, and dropped messages by reason since the server started. */
export async function pushStatus(server: TestServer): Promise<z.infer<typeof statusSchema>['push_jobs']> {
  const res = await fetch(new URL('/_status', server.url));
  return statusSchema.parse(await res.json()).push_jobs;
}
