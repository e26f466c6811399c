// How a job answers requests about it: GET shows it, an abort is refused once it is over, and a finished job answers
// from how it looked when it ended; a running job's rendering is kept a while when it is large.
import type { JobBody } from '../../src/api/push-jobs.js';
import { jobJson } from '../../src/api/job-view.js';
import { fail, ok, type Reply } from '../shared/reply.js';
import type { JobState } from './job-model.js';

/**
 * How long one rendering of a running job answers GETs while only its nodes moved (0: rendered for each GET
 * that follows a change). Rendering and serializing costs about 0.7 µs a node, so a large job polled in a loop
 * during a burst of writes would be rendered for every GET: from 1,000 nodes a rendering is kept 100 ms, longer
 * past 2,000 nodes (0.05 ms a node: 500 ms at 10,000), never more than a second, so that rendering stays a small
 * share of a core however large the job and however many poll it. A smaller job costs little to render and is
 * shown exactly as stored. A change of the job's status is shown at once.
 */
export function keptRenderingMs(nodes: number): number {
  return nodes < 1000 ? 0 : Math.min(1000, Math.max(100, nodes * 0.05));
}

/** The answer to a request about a job: `get` shows it; `abort` is refused once the job is over. */
export function answerAbout(s: JobState, request: 'get' | 'abort', rejected: boolean, body = jobJson(s)): Reply {
  return rejected && request === 'abort' ? cannotAbort(s) : ok(body);
}

/** A job as it ended, and its answer to GET once asked for: serialized once, however often it is read. */
export interface FinishedJob {
  body: JobBody;
  shown?: Reply;
}

/** The answer about a finished job, from how it looked when it ended. */
export function answerFinished(job: FinishedJob, request: 'get' | 'abort'): Reply {
  if (request === 'abort') return cannotAbort(job.body);
  return (job.shown ??= keptAnswer(job.body));
}

/** An answer sent many times: its body is serialized to UTF-8 once (and compressed once, see src/http/respond.ts). */
export function keptAnswer(body: JobBody): Reply {
  return { ...ok(body), json: new TextEncoder().encode(JSON.stringify(body)) };
}

function cannotAbort(s: { id: string; status: string }): Reply {
  return fail(409, `Job ${s.id} is ${s.status} and cannot be aborted.`);
}
