// /organizations/ORG/pushy/schedules: a job body on a cron expression (src/api/schedules.ts). Created, listed and
// shown, deleted, paused and resumed; the organization authorizes each as it does jobs, and its push supervisor
// holds and fires them.
import type { Hono } from 'hono';
import type { InfraSystem } from '../../../actors/system.js';
import { scheduleCreateSchema } from '../../api/schedules.js';
import type { AuthEnv } from '../authenticate.js';
import { parseBody } from '../body.js';
import { askOrg, param, route } from '../respond.js';
import { withinLimits } from './job-limits.js';

const base = '/organizations/:org/pushy/schedules';

export function scheduleRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  route(app, base, {
    GET: (c) => askOrg(c, system, { type: 'list_schedules' }),
    POST: (c) => {
      const body = parseBody(c, scheduleCreateSchema);
      withinLimits(c, body.job, 'job.');
      return askOrg(c, system, { type: 'create_schedule', schedule: body });
    },
  });
  route(app, `${base}/:name`, {
    GET: (c) => askOrg(c, system, { type: 'schedule', name: param(c, 'name'), request: 'get' }),
    DELETE: (c) => askOrg(c, system, { type: 'schedule', name: param(c, 'name'), request: 'delete' }),
  });
  for (const request of ['pause', 'resume'] as const)
    route(app, `${base}/:name/${request}`, {
      POST: (c) => askOrg(c, system, { type: 'schedule', name: param(c, 'name'), request }),
    });
}
