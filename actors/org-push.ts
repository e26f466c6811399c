// Push jobs inside one organization (spec 2.4-2.6, 3, 4.1; reference 6): who may read and start jobs,
// the job list, node states, and the config endpoint. Decisions are pure; the organization actor runs the
// outcome (spawning a job actor, forwarding to it, reading output from the store).
import type { Ref } from 'nact';
import { newGuid } from '../src/lib/ids.js';
import { httpDate } from '../src/lib/clock.js';
import { newJob, resolveQuorum } from './job-machine.js';
import type { JobOptions, JobState } from './job-model.js';
import type { JobMsg, JobSummary } from './job.js';
import type { NodeRecord } from './node-machine.js';
import type { NodeMsg } from './node.js';
import { accessFor, orgUri } from './org-access.js';
import type { OrgState, Outcome } from './org-state.js';
import type { PushSettings } from './push-ports.js';
import { fail, forbidden, ok, type RequestContext } from './reply.js';

/** Live push-jobs state of an organization: derived from the store and the actors, never saved as one. */
export interface PushRuntime {
  summaries: Map<string, JobSummary>;
  jobs: Map<string, Ref<JobMsg>>;
  nodes: Map<string, Ref<NodeMsg>>;
  /** Last known availability of every node ever heard; `available` also excludes rehab. */
  records: Map<string, NodeRecord & { available: boolean }>;
  /** Node records changed since the last write-behind flush. */
  dirty: Set<string>;
  /** Jobs in flight when the server stopped, resumed once the organization actor runs. */
  restored: JobState[];
}

export function emptyPushRuntime(): PushRuntime {
  return { summaries: new Map(), jobs: new Map(), nodes: new Map(), records: new Map(), dirty: new Set(), restored: [] };
}

export interface JobRequest {
  command: string;
  nodes: string[];
  run_timeout: number;
  quorum?: number | string;
  voting_timeout?: number;
  options: JobOptions;
}

export type PushOp =
  | { type: 'list_jobs' }
  | { type: 'start_job'; job: JobRequest }
  | { type: 'get_job'; id: string }
  | { type: 'abort_job'; id: string }
  | { type: 'get_job_output'; id: string; node: string; channel: 'stdout' | 'stderr' }
  | { type: 'list_node_states' }
  | { type: 'get_node_state'; node: string }
  | { type: 'get_push_config'; node: string };

export const PUSH_OPS: ReadonlySet<string> = new Set<PushOp['type']>([
  'list_jobs', 'start_job', 'get_job', 'abort_job', 'get_job_output', 'list_node_states', 'get_node_state', 'get_push_config',
]);

export interface PushOutcome extends Outcome {
  startJob?: JobState;
  toJob?: { id: string; msg: 'get' | 'abort' };
  readOutput?: { id: string; node: string; channel: 'stdout' | 'stderr' };
  openSession?: string;
}

/** Reference 6.1: `pushy_job_readers`/`pushy_job_writers` when they exist; else members read, admins write. */
export function pushAccess(state: OrgState, ctx: RequestContext): { read: boolean; write: boolean } {
  const access = accessFor(state, ctx);
  const write = state.groups.has('pushy_job_writers') ? access.inGroup('pushy_job_writers') : access.inGroup('admins');
  const read = write || (state.groups.has('pushy_job_readers') ? access.inGroup('pushy_job_readers') : access.can(state.org.acl, 'read'));
  return { read, write };
}

export function handlePushOp(state: OrgState, ctx: RequestContext, op: PushOp, settings: PushSettings, nowMs: number): PushOutcome {
  const may = pushAccess(state, ctx);
  const push = state.push;
  switch (op.type) {
    case 'list_jobs':
      if (!may.read) return { reply: forbidden('read') };
      return {
        reply: ok([...push.summaries.values()]
          .sort((a, b) => b.created_at - a.created_at || b.id.localeCompare(a.id))
          .map((s) => ({ ...s, created_at: httpDate(s.created_at), updated_at: httpDate(s.updated_at) }))),
      };
    case 'start_job': {
      if (!may.write) return { reply: forbidden('create') };
      const nodes = [...new Set(op.job.nodes)];
      let quorum: number;
      try {
        quorum = resolveQuorum(op.job.quorum, nodes.length);
      } catch {
        return { reply: fail(400, "Field 'quorum' invalid") };
      }
      if (quorum > nodes.length) return { reply: fail(400, `Field 'quorum' invalid: ${quorum} is more than the ${nodes.length} nodes of the job`) };
      const voting = Math.min(op.job.voting_timeout ?? settings.voting_timeout, settings.voting_timeout);
      const job = newJob({ id: newGuid(), command: op.job.command, nodes, run_timeout: op.job.run_timeout, voting_timeout: voting, quorum, options: op.job.options, at: nowMs });
      const uri = `${orgUri(ctx, state)}/pushy/jobs/${job.id}`;
      return { reply: ok({ id: job.id, uri }, 201, uri), startJob: job };
    }
    case 'get_job':
    case 'abort_job': {
      const perm = op.type === 'get_job' ? may.read : may.write;
      if (!perm) return { reply: forbidden(op.type === 'get_job' ? 'read' : 'update') };
      if (!push.summaries.has(op.id)) return { reply: fail(404, `Cannot find job ${op.id}`) };
      return { reply: ok(null), toJob: { id: op.id, msg: op.type === 'get_job' ? 'get' : 'abort' } };
    }
    case 'get_job_output':
      if (!may.read) return { reply: forbidden('read') };
      if (!push.summaries.has(op.id)) return { reply: fail(404, `Cannot find job ${op.id}`) };
      return { reply: ok(null), readOutput: { id: op.id, node: op.node, channel: op.channel } };
    case 'list_node_states': {
      if (!may.read) return { reply: forbidden('read') };
      const names = [...new Set([...state.nodes.keys(), ...push.records.keys()])].sort();
      return { reply: ok(names.map((n) => nodeStateJson(state, n))) };
    }
    case 'get_node_state':
      if (!may.read) return { reply: forbidden('read') };
      if (!state.nodes.has(op.node) && !push.records.has(op.node)) return { reply: fail(404, `Cannot load node ${op.node}`) };
      return { reply: ok(nodeStateJson(state, op.node)) };
    case 'get_push_config': {
      // A node's own client fetches its config; a user may too when it can read jobs (reference 3).
      const r = ctx.requestor;
      const allowed = r.kind === 'client' ? r.name === op.node && !r.validator : may.read;
      if (!allowed) return { reply: r.kind === 'client' ? fail(403, 'Client and node name must match') : forbidden('read') };
      return { reply: ok(null), openSession: op.node };
    }
  }
}

/** Spec 2.5: a node never heard is `down` since the organization began. */
function nodeStateJson(state: OrgState, node: string): Record<string, unknown> {
  const r = state.push.records.get(node);
  return {
    node_name: node,
    status: r?.status ?? 'down',
    updated_at: httpDate(r?.updated_at ?? state.org.created_at),
    availability: r?.available ? 'available' : 'unavailable',
  };
}
