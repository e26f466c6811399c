// Push jobs inside one organization (spec 2.4-2.6, 3, 4.1; reference 6): who may read and start jobs, and whether
// a new job and a config request are well formed. Decisions are pure; what passes goes on to the organization's
// push supervisor (actors/push/push-supervisor.ts), which answers it from the jobs and node states it holds.
import type { NodeStateBody } from '../../../src/api/push-jobs.js';
import { newGuid } from '../../../src/lib/ids.js';
import { envelopeFor } from '../../../src/protocol/messages.js';
import { curveKeyBytes } from '../../../src/protocol/z85.js';
import type { JobState } from '../../push/job-model.js';
import { jobFromRequest, requestOf, type JobRequest } from '../../push/job-request.js';
import type { ScheduleState } from '../../push/schedule-machine.js';
import type { ScheduleCreate } from '../../../src/api/schedules.js';
import { cronProblem } from '../../../src/push/cron.js';
import type { NodeAvailability } from '../../push/push-data.js';
import type { PushRequest } from '../../push/push-requests.js';
import { accessFor, orgUri } from '../access.js';
import type { OrgState } from '../org-state.js';
import type { HandlerEnv, OrgOutcome } from '../outcome.js';
import { fail, forbidden, ok, type RequestContext } from '../../shared/reply.js';

export type PushOp =
  | { type: 'list_jobs'; offset: number; limit: number }
  /** May the requestor follow the organization's job feed? */
  | { type: 'watch_jobs' }
  | { type: 'start_job'; job: JobRequest }
  | { type: 'get_job'; id: string }
  | { type: 'abort_job'; id: string }
  | { type: 'get_job_output'; id: string; node: string; channel: 'stdout' | 'stderr' }
  /** `heartbeats`: each row also says when the node's last heartbeat arrived (the dashboard's node grid). */
  | { type: 'list_node_states'; heartbeats?: boolean }
  /** What the requestor may do with jobs: `{ read, write }`, so a page offers only what the org would allow. */
  | { type: 'get_push_access' }
  | { type: 'get_node_state'; node: string }
  /** `ccpk`: the requester's Curve public key, Z85, as the query string gave it (reference 2.2). */
  | { type: 'get_push_config'; node: string; ccpk?: string }
  | { type: 'create_schedule'; schedule: ScheduleCreate }
  | { type: 'list_schedules' }
  | { type: 'schedule'; name: string; request: 'get' | 'delete' | 'pause' | 'resume' };

/** Reference 6.1: `pushy_job_readers`/`pushy_job_writers` when they exist; else members read, admins write. */
export function pushAccess(state: OrgState, ctx: RequestContext): { read: boolean; write: boolean } {
  const access = accessFor(state, ctx);
  const write = state.groups.has('pushy_job_writers') ? access.inGroup('pushy_job_writers') : access.inGroup('admins');
  const read =
    write ||
    (state.groups.has('pushy_job_readers') ? access.inGroup('pushy_job_readers') : access.can(state.org.acl, 'read'));
  return { read, write };
}

export function handlePushOp(state: OrgState, ctx: RequestContext, op: PushOp, env: HandlerEnv): OrgOutcome {
  const may = pushAccess(state, ctx);
  const since = state.org.created_at;
  switch (op.type) {
    case 'list_jobs':
      if (!may.read) return { reply: forbidden('read') };
      return toPush({ type: 'list_jobs', offset: op.offset, limit: op.limit });
    case 'watch_jobs':
      return { reply: may.read ? ok(null) : forbidden('read') };
    case 'start_job':
      if (!may.write) return { reply: forbidden('create') };
      return startJob(state, ctx, op.job, env);
    case 'get_job':
    case 'abort_job': {
      const perm = op.type === 'get_job' ? may.read : may.write;
      if (!perm) return { reply: forbidden(op.type === 'get_job' ? 'read' : 'update') };
      return toPush({ type: 'job', id: op.id, request: op.type === 'get_job' ? 'get' : 'abort' });
    }
    case 'get_job_output':
      if (!may.read) return { reply: forbidden('read') };
      return toPush({ type: 'job_output', id: op.id, node: op.node, channel: op.channel });
    case 'list_node_states':
      if (!may.read) return { reply: forbidden('read') };
      return toPush({ type: 'node_states', nodes: [...state.nodes.keys()], since, heartbeats: op.heartbeats === true });
    case 'get_push_access':
      return { reply: ok(may) };
    case 'create_schedule':
      // Authorized as job creation: each firing starts a job as its creator would.
      if (!may.write) return { reply: forbidden('create') };
      return createSchedule(state, ctx, op.schedule, env);
    case 'list_schedules':
      return may.read ? toPush({ type: 'schedules' }) : { reply: forbidden('read') };
    case 'schedule': {
      const perm = op.request === 'get' ? may.read : may.write;
      if (!perm)
        return { reply: forbidden(op.request === 'get' ? 'read' : op.request === 'delete' ? 'delete' : 'update') };
      return toPush({ type: 'schedule', name: op.name, request: op.request });
    }
    case 'get_node_state':
      if (!may.read) return { reply: forbidden('read') };
      return toPush({ type: 'node_state', node: op.node, known: state.nodes.has(op.node), since });
    case 'get_push_config': {
      // A node's own client fetches its config; a user may too when it can read jobs (reference 3).
      const r = ctx.requestor;
      const allowed = r.kind === 'client' ? r.name === op.node && !r.validator : may.read;
      if (!allowed)
        return { reply: r.kind === 'client' ? fail(403, 'Client and node name must match') : forbidden('read') };
      // With CurveZMQ only the keys named here are admitted, so a request that names none could not connect.
      if (!env.push.curve) return toPush({ type: 'node_config', node: op.node });
      if (op.ccpk === undefined)
        return { reply: fail(400, "Missing ccpk: name the client's Curve public key (?ccpk=Z85 key)") };
      if (curveKeyBytes(op.ccpk) === undefined)
        return { reply: fail(400, 'Bad ccpk: a Curve public key is 40 characters of Z85') };
      return toPush({ type: 'node_config', node: op.node, ccpk: op.ccpk });
    }
  }
}

/** The request goes on to the organization's push supervisor, which answers it. */
function toPush(request: PushRequest): OrgOutcome {
  return { reply: ok(null), effects: [{ type: 'push', request }] };
}

/** A new job, checked: its quorum and rollout, its voting timeout within the server's, and a commit nodes can take. */
function startJob(state: OrgState, ctx: RequestContext, request: JobRequest, env: HandlerEnv): OrgOutcome {
  const made = jobFromRequest(request, {
    id: newGuid(),
    requestor: ctx.requestor.name,
    at: env.now,
    votingLimit: env.push.voting_timeout,
  });
  if ('error' in made) return { reply: fail(400, made.error) };
  const { job } = made;
  const tooBig = commitTooBig(job, state.org.name, env);
  if (tooBig !== null) return { reply: fail(400, tooBig) };
  const uri = `${orgUri(ctx, state)}/pushy/jobs/${job.id}`;
  const reply = ok({ id: job.id, uri }, 201, uri);
  return { reply, effects: [{ type: 'push', request: { type: 'start_job', job, reply } }] };
}

/**
 * A new schedule, checked as its jobs will be (quorum, rollout, voting timeout, commit size) and its expression and
 * time zone, which must fire at least once.
 */
function createSchedule(state: OrgState, ctx: RequestContext, body: ScheduleCreate, env: HandlerEnv): OrgOutcome {
  const made = jobFromRequest(requestOf(body.job), {
    id: newGuid(),
    requestor: ctx.requestor.name,
    at: env.now,
    votingLimit: env.push.voting_timeout,
  });
  if ('error' in made) return { reply: fail(400, made.error.replace("Field '", "Field 'job.")) };
  const tooBig = commitTooBig(made.job, state.org.name, env);
  if (tooBig !== null) return { reply: fail(400, tooBig) };
  const problem = cronProblem(body.cron, body.time_zone, env.now);
  if (problem !== null) return { reply: fail(400, problem) };
  const schedule: ScheduleState = {
    ...body,
    uid: newGuid(),
    paused: false,
    requestor: ctx.requestor.name,
    created_at: env.now,
    updated_at: env.now,
    handled_through: env.now,
    jobs: [],
    skipped_overlap: 0,
    missed: 0,
  };
  return toPush({ type: 'schedule_create', schedule });
}

/** How many of the organization's nodes GET .../pushy/node_states shows with each status and availability. */
export interface NodeStateCount {
  status: NodeStateBody['status'];
  availability: NodeStateBody['availability'];
  nodes: number;
}

/**
 * Counts the nodes node_states lists, as it shows them, without building their answers: the metrics listener
 * asks on every scrape. The combinations a node is normally in are always present, so a count that falls to 0
 * shows as 0.
 */
export function countNodeStates(
  records: ReadonlyMap<string, NodeAvailability>,
  orgNodes: ReadonlyMap<string, unknown>,
): NodeStateCount[] {
  // Indexed [up available, up unavailable, down available, down unavailable].
  const counts = [0, 0, 0, 0];
  for (const r of records.values()) counts[(r.status === 'up' ? 0 : 2) + (r.available ? 0 : 1)]! += 1;
  for (const node of orgNodes.keys()) if (!records.has(node)) counts[3]! += 1; // never heard: down (spec 2.5)
  const [upAvailable = 0, upUnavailable = 0, downAvailable = 0, downUnavailable = 0] = counts;
  const all: NodeStateCount[] = [
    { status: 'up', availability: 'available', nodes: upAvailable },
    { status: 'up', availability: 'unavailable', nodes: upUnavailable },
    { status: 'down', availability: 'unavailable', nodes: downUnavailable },
  ];
  if (downAvailable > 0) all.push({ status: 'down', availability: 'available', nodes: downAvailable });
  return all;
}

/**
 * A node drops a message past max_body_size (reference 2.3), so a commit that large would leave every node
 * silent until the voting timeout: the job is refused instead. The envelope is sized for the longest node name
 * and the largest sequence.
 */
function commitTooBig(job: JobState, org: string, env: HandlerEnv): string | null {
  const node = Object.keys(job.nodes).reduce((a, b) => (b.length > a.length ? b : a), '');
  const body = {
    type: 'commit',
    job_id: job.id,
    command: job.command,
    run_timeout: job.run_timeout,
    ...job.options,
    ...envelopeFor(org, node, env.push.incarnation_id, Number.MAX_SAFE_INTEGER, env.now),
  };
  const bytes = Buffer.byteLength(JSON.stringify(body));
  if (bytes <= env.push.max_body_size) return null;
  return `Fields 'command', 'env', 'dir', 'user' and 'file' make a commit message of ${bytes} bytes; nodes accept at most ${env.push.max_body_size}`;
}
