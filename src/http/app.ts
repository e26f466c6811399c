// The HTTP facade: GET /_status unauthenticated, every other path authenticated before its route runs.
// Handlers only send messages into the actor tree and map the replies.
import { Hono } from 'hono';
import { VERSION } from '../lib/version.js';
import type { InfraSystem } from '../../actors/system.js';
import { authenticate, type AuthEnv } from './authenticate.js';
import { onError } from './errors.js';
import { aclRoutes } from './routes/acls.js';
import { clientRoutes } from './routes/clients.js';
import { groupRoutes } from './routes/groups.js';
import { objectRoutes } from './routes/objects.js';
import { organizationRoutes } from './routes/organizations.js';
import { pushyRoutes } from './routes/pushy.js';
import { searchRoutes } from './routes/search.js';
import { userRoutes } from './routes/users.js';


export interface AppOptions {
  system: InfraSystem;
  /** Push-jobs transport figures for /_status. */
  push?: { status(): { connected_nodes: number; accepted: number; dropped: Record<string, number> } };
  authSkewSeconds: number;
  now?: () => number;
}

export function createApp(opts: AppOptions): Hono<AuthEnv> {
  const { system } = opts;
  const app = new Hono<AuthEnv>();
  app.onError(onError);
  app.notFound((c) => c.json({ error: ['not found'] }, 404));

  app.get('/_status', async (c) => {
    const store = await system.store.state();
    const body = {
      status: store === 'ok' ? 'pong' : 'fail', version: VERSION, store: { kind: system.store.kind, state: store },
      organizations: system.orgNames().length, push_jobs: opts.push?.status() ?? null,
    };
    return c.json(body, store === 'ok' ? 200 : 503);
  });
  app.use('*', authenticate({ system, skewSeconds: opts.authSkewSeconds, now: opts.now ?? Date.now }));

  aclRoutes(app, system);
  organizationRoutes(app, system);
  clientRoutes(app, system);
  groupRoutes(app, system);
  userRoutes(app, system);
  objectRoutes(app, system);
  pushyRoutes(app, system);
  searchRoutes(app, system);
  return app;
}
