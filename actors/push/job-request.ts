// A job as its caller asked for it (POST .../pushy/jobs, or a schedule's job body) made into the job machine's first
// state: its quorum and rollout resolved, its voting timeout held to the server's. Pure: the organization checks a
// POST with it, and a schedule's firing starts its job with it.
import type { JobStart } from '../../src/api/push-jobs.js';
import type { RolloutRequest } from '../../src/api/rollout.js';
import { newJob, resolveQuorum } from './job-machine.js';
import type { JobOptions, JobState, RolloutState } from './job-model.js';
import { planRollout, RolloutError } from './rollout-plan.js';

export interface JobRequest {
  command: string;
  nodes: string[];
  run_timeout: number;
  quorum?: number | string;
  voting_timeout?: number;
  options: JobOptions;
  /** Run in waves (src/api/rollout.ts). */
  rollout?: RolloutRequest;
}

/** The request a job body makes: its options gathered as the commit carries them. */
export function requestOf(body: JobStart): JobRequest {
  const options: JobOptions = {};
  if (body.capture_output !== undefined) options.capture = body.capture_output;
  if (body.env !== undefined) options.env = body.env;
  if (body.dir !== undefined) options.dir = body.dir;
  if (body.user !== undefined) options.user = body.user;
  if (body.file !== undefined) options.file = body.file;
  const request: JobRequest = { command: body.command, nodes: body.nodes, run_timeout: body.run_timeout, options };
  if (body.quorum !== undefined) request.quorum = body.quorum;
  if (body.voting_timeout !== undefined) request.voting_timeout = body.voting_timeout;
  if (body.rollout !== undefined) request.rollout = body.rollout;
  return request;
}

export interface JobMaking {
  id: string;
  requestor: string;
  at: number;
  /** The server's voting_timeout: a job may ask for less, never more. */
  votingLimit: number;
}

/** The new job, or why it cannot be made (a 400's message naming the field). */
export function jobFromRequest(request: JobRequest, m: JobMaking): { job: JobState } | { error: string } {
  const nodes = [...new Set(request.nodes)];
  let quorum: number;
  try {
    quorum = resolveQuorum(request.quorum, nodes.length);
  } catch {
    return { error: "Field 'quorum' invalid" };
  }
  if (quorum > nodes.length)
    return { error: `Field 'quorum' invalid: ${quorum} is more than the ${nodes.length} nodes of the job` };
  let rollout: RolloutState | undefined;
  try {
    rollout = request.rollout && planRollout(request.rollout, nodes.length, (n) => resolveQuorum(request.quorum, n));
  } catch (e) {
    if (e instanceof RolloutError) return { error: e.message };
    throw e;
  }
  const job = newJob({
    id: m.id,
    command: request.command,
    nodes,
    run_timeout: request.run_timeout,
    voting_timeout: Math.min(request.voting_timeout ?? m.votingLimit, m.votingLimit),
    quorum,
    options: request.options,
    requestor: m.requestor,
    at: m.at,
    ...(rollout === undefined ? {} : { rollout }),
  });
  return { job };
}
