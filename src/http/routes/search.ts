// GET /organizations/ORG/search[/INDEX]?q=QUERY&start=N&rows=N: `{total, start, rows}` filtered by the
// requester's read permission.
import type { Hono } from 'hono';
import { z } from 'zod';
import type { InfraSystem } from '../../../actors/system.js';
import type { AuthEnv } from '../authenticate.js';
import { ApiError } from '../errors.js';
import { askOrg, param, route } from '../respond.js';

const paging = z.object({
  q: z.string().max(10_000).default('*:*'),
  start: z.coerce.number().int().nonnegative().default(0),
  rows: z.coerce.number().int().nonnegative().max(10_000).default(1000),
});

export function searchRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  route(app, '/organizations/:org/search', {
    GET: (c) => askOrg(c, system, { type: 'list_indexes' }),
  });
  route(app, '/organizations/:org/search/:index', {
    GET: (c) => {
      const parsed = paging.safeParse({ q: c.req.query('q'), start: c.req.query('start'), rows: c.req.query('rows') });
      if (!parsed.success)
        throw ApiError.of(400, `Parameter '${parsed.error.issues[0]?.path.join('.') ?? 'q'}' invalid`);
      return askOrg(c, system, { type: 'search', index: param(c, 'index'), ...parsed.data });
    },
  });
}
