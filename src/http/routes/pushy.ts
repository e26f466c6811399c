// /organizations/ORG/pushy: jobs, their output, node states and the node config endpoint (spec 4.1); the jobs'
// status feeds are in job-feeds.ts.
import type { Hono } from 'hono';
import type { InfraSystem } from '../../../actors/system.js';
import { requestOf } from '../../../actors/push/job-request.js';
import type { AuthEnv } from '../authenticate.js';
import { parseBody } from '../body.js';
import { ApiError } from '../errors.js';
import { askOrg, param, route, type Ctx } from '../respond.js';
import { jobStartSchema } from '../../api/push-jobs.js';
import { EventStreams } from '../event-streams.js';
import { jobFeedRoutes } from './job-feeds.js';
import { withinLimits } from './job-limits.js';
import { scheduleRoutes } from './schedules.js';

const base = '/organizations/:org/pushy';

export function pushyRoutes(app: Hono<AuthEnv>, system: InfraSystem, streams = new EventStreams(Infinity)): void {
  jobRoutes(app, system);
  jobFeedRoutes(app, system, streams);
  nodeRoutes(app, system);
  scheduleRoutes(app, system);
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
  return { type: 'start_job', job: requestOf(withinLimits(c, parseBody(c, jobStartSchema))) };
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
