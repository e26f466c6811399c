// The chaos run's jobs: a submission through the entry (the balancer, or a live member in turn) tried again while
// the cluster answers 503 or nothing, each try recorded; and a bounded wait for a job's end, every GET recorded.
// A job's end is what GET shows: the runner never takes the POST's word or its own clock for it.
import { jobCreatedSchema, jobSchema } from '../../../src/api/push-jobs.js';
import { isFinished } from '../../../src/push/job-states.js';
import type { ApiClient } from '../../../src/auth/api-client.js';
import type { ClusterUnderTest } from './cluster-under-test.js';
import type { HistoryRecorder, JobRole, JobView, Submission } from './history.js';

/** How long a submission is tried again while the cluster refuses it (503, no answer). */
const SUBMIT_FOR_MS = 20_000;
const RETRY_MS = 250;
const POLL_MS = 250;

export interface Entry {
  url: string;
  /** The member behind `url`; null for the balancer. */
  member: number | null;
  client: ApiClient;
}

/** Where the next request goes: the balancer, or the next member up (a frozen or killed one is not asked). */
export function entries(c: ClusterUnderTest): () => Promise<Entry> {
  const clients = new Map<string, Promise<ApiClient>>();
  const clientOf = (url: string) => {
    const made = clients.get(url) ?? c.admin(url);
    clients.set(url, made);
    return made;
  };
  let turn = 0;
  return async () => {
    if (c.balancerUrl !== null) return { url: c.balancerUrl, member: null, client: await clientOf(c.balancerUrl) };
    const up = c.members.filter((m) => m.state === 'up');
    const m = up[turn++ % Math.max(1, up.length)] ?? c.members[0];
    if (m === undefined) throw new Error('the cluster has no member');
    return { url: m.url, member: m.index, client: await clientOf(m.url) };
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function submitJob(
  entry: () => Promise<Entry>,
  history: HistoryRecorder,
  job: { round: number; role: JobRole; command: string; nodes: string[]; runTimeoutS: number; votingTimeoutS: number },
): Promise<Submission> {
  const at = Date.now();
  const tries: Submission['tries'] = [];
  let last: { status: number | null; body: unknown } = { status: null, body: null };
  let via: Entry | undefined;
  while (Date.now() - at < SUBMIT_FOR_MS) {
    via = await entry();
    const tried = Date.now();
    const res = await via.client
      .request('POST', '/organizations/default/pushy/jobs', {
        command: job.command,
        nodes: job.nodes,
        run_timeout: job.runTimeoutS,
        voting_timeout: job.votingTimeoutS,
      })
      .catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    if (res instanceof Error) {
      tries.push({ at: tried, status: null, error: res.message });
      last = { status: null, body: res.message };
    } else {
      tries.push({ at: tried, status: res.status });
      last = { status: res.status, body: res.body };
      const created = res.status === 201 ? jobCreatedSchema.safeParse(res.body) : undefined;
      if (created?.success) {
        const s = { ...job, via: via.url, member: via.member, at, id: created.data.id, answer: last, tries };
        history.submitted(s);
        return s;
      }
      // Anything but "try again" is the cluster's answer, kept as it is.
      if (res.status !== 503 && res.status < 500) break;
    }
    await pause(RETRY_MS);
  }
  const s = { ...job, via: via?.url ?? '', member: via?.member ?? null, at, id: null, answer: last, tries };
  history.submitted(s);
  return s;
}

/** Polls the job until a GET shows it finished or `until` (epoch ms) passes; answers what was seen last. */
export async function followJob(
  entry: () => Promise<Entry>,
  history: HistoryRecorder,
  id: string,
  until: number,
): Promise<JobView | undefined> {
  for (;;) {
    const via = await entry();
    const res = await via.client.request('GET', `/organizations/default/pushy/jobs/${id}`).catch(() => undefined);
    const job = res?.status === 200 ? jobSchema.safeParse(res.body) : undefined;
    if (job?.success) {
      const view = history.seen(job.data, Date.now());
      if (isFinished(job.data.status)) return view;
    }
    if (Date.now() > until) return history.job(id);
    await pause(POLL_MS);
  }
}
