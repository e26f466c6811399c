// /organizations/ORG/pushy: jobs, their output, node states and the node config endpoint (spec 4.1); the jobs'
// status feeds are in job-feeds.ts.
import type { Hono } from 'hono';
import type { InfraSystem } from '../../../actors/system.js';
import type { JobOptions } from '../../../actors/push/job-model.js';
import type { AuthEnv } from '../authenticate.js';
import { parseBody } from '../body.js';
import { ApiError } from '../errors.js';
import { askOrg, param, route, type Ctx } from '../respond.js';
import { jobStartSchema } from '../../api/push-jobs.js';
import { EventStreams } from '../event-streams.js';
import { jobFeedRoutes } from './job-feeds.js';

const base = '/organizations/:org/pushy';

export function pushyRoutes(app: Hono<AuthEnv>, system: InfraSystem, streams = new EventStreams(Infinity)): void {
  jobRoutes(app, system);
  jobFeedRoutes(app, system, streams);
  nodeRoutes(app, system);
}

function jobRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  route(app, `${base}/jobs`, {
    GET: (c) => askOrg(c, system, { type: 'list_jobs', ...jobPage(c.req.query('offset'), c.req.query('limit')) }),
    POST: (c) => askOrg(c, system, startJobOp(c)),
  });
  route(app, `${base}/jobs/:id`, {
    GET: (c) => askOrg(c, system, { type: 'get_job', id: param(c, 'id') }),
  });
  route(app, `${base}/jobs/:id/abort`, {
    POST: (c) => askOrg(c, system, { type: 'abort_job', id: param(c, 'id') }),
  });
  route(app, `${base}/jobs/:id/output/:node/:channel`, {
    GET: (c) => {
      const channel = param(c, 'channel');
      if (channel !== 'stdout' && channel !== 'stderr')
        throw ApiError.of(404, `No channel ${channel}: use stdout or stderr`);
      return askOrg(c, system, { type: 'get_job_output', id: param(c, 'id'), node: param(c, 'node'), channel });
    },
  });
}

type StartJobOp = Parameters<typeof askOrg>[2] & { type: 'start_job' };

/** The start_job op of a POSTed job, held to the request limits on its nodes and command. */
function startJobOp(c: Ctx): StartJobOp {
  const body = parseBody(c, jobStartSchema);
  const limits = c.get('limits');
  if (body.nodes.length > limits.jobNodes)
    throw ApiError.of(400, `Field 'nodes' names more than ${limits.jobNodes} nodes`);
  if (body.command.length > limits.commandLength)
    throw ApiError.of(400, `Field 'command' is longer than ${limits.commandLength} characters`);
  const options: JobOptions = {};
  if (body.capture_output !== undefined) options.capture = body.capture_output;
  if (body.env !== undefined) options.env = body.env;
  if (body.dir !== undefined) options.dir = body.dir;
  if (body.user !== undefined) options.user = body.user;
  if (body.file !== undefined) options.file = body.file;
  const job: StartJobOp = {
    type: 'start_job',
    job: { command: body.command, nodes: body.nodes, run_timeout: body.run_timeout, options },
  };
  if (body.quorum !== undefined) job.job.quorum = body.quorum;
  if (body.voting_timeout !== undefined) job.job.voting_timeout = body.voting_timeout;
  if (body.rollout !== undefined) job.job.rollout = body.rollout;
  return job;
}

function nodeRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  route(app, `${base}/node_states`, {
    GET: (c) => askOrg(c, system, { type: 'list_node_states' }),
  });
  route(app, `${base}/node_states/:node`, {
    GET: (c) => askOrg(c, system, { type: 'get_node_state', node: param(c, 'node') }),
  });
  route(app, `${base}/config/:node`, {
    GET: (c) => {
      const ccpk = c.req.query('ccpk');
      return askOrg(c, system, {
        type: 'get_push_config',
        node: param(c, 'node'),
        ...(ccpk === undefined ? {} : { ccpk }),
      });
    },
  });
}

/** `?offset=N&limit=M` of the job list; without them every job, newest first, as the original answered. */
function jobPage(offset: string | undefined, limit: string | undefined): { offset: number; limit: number } {
  const count = (name: string, value: string | undefined, fallback: number, least: number): number => {
    if (value === undefined) return fallback;
    if (!/^\d{1,9}$/.test(value) || Number(value) < least)
      throw ApiError.of(400, `Query parameter '${name}' must be a whole number${least > 0 ? ' above 0' : ''}`);
    return Number(value);
  };
  return { offset: count('offset', offset, 0, 0), limit: count('limit', limit, Number.MAX_SAFE_INTEGER, 1) };
}
