// How the push supervisor answers what its organization hands it (push-requests.ts): from the job list and node
// records it holds, a live job's actor, the finished jobs it remembers, or the store, read outside its turn.
import { dispatch, type Ref } from 'nact';
import type { JobSummaryBody, NodeStateBody } from '../../src/api/push-jobs.js';
import { httpDate } from '../../src/lib/dates.js';
import { jobOutputsCollection } from '../../src/store/collections.js';
import { fail, ok, type Reply } from '../shared/reply.js';
import { configBody } from './config-answer.js';
import type { FinishedJobs } from './finished-jobs.js';
import { answerAbout, answerFinished } from './job-answers.js';
import type { JobHandle } from './job.js';
import { loadJob } from './job-store.js';
import type { PushPorts } from './ports.js';
import type { PushData } from './push-data.js';
import type { PushRequest } from './push-requests.js';

export interface AnswerSources {
  org: string;
  ports: PushPorts;
  data: PushData;
  finished: FinishedJobs;
  live(id: string): JobHandle | undefined;
  /** When the node's last heartbeat arrived here, if it was heard since this server started. */
  lastHeartbeat(node: string): number | undefined;
}

/** Answers one request (a job start excepted: the supervisor spawns its actor). */
export function answerPush(
  src: AnswerSources,
  request: Exclude<PushRequest, { type: 'start_job' }>,
  requesterKey: string,
  replyTo: Ref<Reply>,
): void {
  const { data } = src;
  switch (request.type) {
    case 'list_jobs':
      dispatch(replyTo, ok(data.headers.newestFirst(request.offset, request.limit).map(summaryOf)));
      return;
    case 'job':
      answerFromJob(src, request.id, request.request, replyTo);
      return;
    case 'job_output':
      if (!data.headers.has(request.id)) dispatch(replyTo, fail(404, `Cannot find job ${request.id}`));
      else answerWithOutput(src, request.id, request.node, request.channel, replyTo);
      return;
    case 'node_states': {
      const names = [...new Set([...request.nodes, ...data.records.keys()])].sort();
      const rows = names.map((n) => nodeStateJson(data, n, request.since));
      if (!request.heartbeats) dispatch(replyTo, ok(rows));
      else dispatch(replyTo, ok(rows.map((row) => ({ ...row, last_heartbeat: heardAt(src, row.node_name) }))));
      return;
    }
    case 'node_state':
      if (!request.known && !data.records.has(request.node))
        dispatch(replyTo, fail(404, `Cannot load node ${request.node}`));
      else dispatch(replyTo, ok(nodeStateJson(data, request.node, request.since)));
      return;
    case 'node_config': {
      const { transport, settings } = src.ports;
      const { node, ccpk } = request;
      answerLater(src, replyTo, async () => {
        const grant = await transport.openSession(src.org, node, ccpk);
        return ok(configBody(src.org, node, grant, settings, requesterKey));
      });
      return;
    }
  }
}

function summaryOf(s: {
  id: string;
  command: string;
  status: JobSummaryBody['status'];
  run_timeout: number;
  created_at: number;
  updated_at: number;
}): JobSummaryBody {
  return {
    id: s.id,
    command: s.command,
    status: s.status,
    run_timeout: s.run_timeout,
    created_at: httpDate(s.created_at),
    updated_at: httpDate(s.updated_at),
  };
}

function heardAt(src: AnswerSources, node: string): string | null {
  const at = src.lastHeartbeat(node);
  return at === undefined ? null : httpDate(at);
}

/** A live job shows itself as stored and its actor takes an abort; a finished job's stored record answers. */
function answerFromJob(src: AnswerSources, id: string, request: 'get' | 'abort', replyTo: Ref<Reply>): void {
  const live = src.live(id);
  if (live) {
    if (request === 'get') dispatch(replyTo, live.shown());
    else dispatch(live.ref, { type: 'abort', replyTo });
    return;
  }
  if (!src.data.headers.has(id)) {
    dispatch(replyTo, fail(404, `Cannot find job ${id}`));
    return;
  }
  const final = src.finished.get(id);
  if (final) {
    dispatch(replyTo, answerFinished(final, request));
    return;
  }
  answerLater(src, replyTo, async () => {
    const job = await loadJob(src.ports.store, src.org, id);
    return job === undefined ? fail(404, `Cannot find job ${id}`) : answerAbout(job, request, true);
  });
}

function answerWithOutput(
  src: AnswerSources,
  id: string,
  node: string,
  channel: 'stdout' | 'stderr',
  replyTo: Ref<Reply>,
): void {
  answerLater(src, replyTo, async () => {
    const raw = (await src.ports.store.get(jobOutputsCollection(src.org), `${id}/${node}`)) as
      { stdout?: string; stderr?: string; truncated?: boolean } | undefined;
    const text = raw?.[channel];
    if (typeof text !== 'string') return fail(404, `No ${channel} captured for node ${node} in job ${id}`);
    return { status: 200, body: text, raw: true, truncated: raw?.truncated === true };
  });
}

/** Store reads and session keys answer outside the supervisor's turn: they change nothing it holds. */
function answerLater(src: AnswerSources, replyTo: Ref<Reply>, answer: () => Promise<Reply>): void {
  answer().then(
    (reply) => dispatch(replyTo, reply),
    (e: unknown) => {
      src.ports.log.error('answering a push-jobs request failed', { org: src.org, error: e });
      dispatch(replyTo, fail(503, 'The data store is unavailable. Try again.'));
    },
  );
}

/** Spec 2.5: a node never heard is `down` since the organization began (`since`). */
function nodeStateJson(data: PushData, node: string, since: number): NodeStateBody {
  const r = data.records.get(node);
  return {
    node_name: node,
    status: r?.status ?? 'down',
    updated_at: httpDate(r?.updated_at ?? since),
    availability: r?.available ? 'available' : 'unavailable',
  };
}
