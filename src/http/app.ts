// The HTTP facade: GET /_status unauthenticated, the web dashboard under /ui with its own sign-in, every other
// path authenticated before its route runs. Handlers only send messages into the actor tree and map the replies.
import { Hono } from 'hono';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import type { InfraSystem } from '../../actors/system.js';
import type { ClusterStatus, LimitsStatus } from '../api/status-schema.js';
import { EventStreams } from './event-streams.js';
import { SignaturePool } from '../auth/signature-pool.js';
import type { Logger } from '../lib/logger.js';
import { authenticate, type AuthEnv } from './authenticate.js';
import { errorHandler } from './errors.js';
import { DEFAULT_LIMITS, type RequestLimits } from './limits.js';
import { requestLog } from './request-log.js';
import { requestMetrics, type RequestObserver } from './request-metrics.js';
import { aclRoutes } from './routes/acls.js';
import { clientRoutes } from './routes/clients.js';
import { groupRoutes } from './routes/groups.js';
import { objectRoutes } from './routes/objects.js';
import { organizationRoutes } from './routes/organizations.js';
import { pushyRoutes } from './routes/pushy.js';
import { searchRoutes } from './routes/search.js';
import { userRoutes } from './routes/users.js';
import { runningStatus, type PushFigures } from './status-answer.js';
import { MemorySessions, type Sessions } from './ui/sessions.js';
import { MemorySignInThrottle, type SignInThrottle } from './ui/sign-in-throttle.js';
import { createUiApp } from './ui/ui-app.js';
import { UI } from './ui/ui-env.js';

const DEFAULT_UI_SESSION_SECONDS = 3600;

export interface AppOptions {
  system: InfraSystem;
  /** Push-jobs transport figures for /_status. */
  push?: { status(): PushFigures };
  authSkewSeconds: number;
  log: Logger;
  now?: () => number;
  /** Whether store operations fail now (the server says `degraded` while they do). */
  storeFailing?: () => boolean;
  limits?: RequestLimits;
  /** Seconds a dashboard sign-in lasts without a request (ui_session_timeout). */
  uiSessionSeconds?: number;
  /** Told of every request when the metrics listener is on. */
  observeRequest?: RequestObserver;
  /** Where signatures are checked; inline when not given. */
  signatures?: SignaturePool;
  /** This process among the others sharing its Redis store (absent on the file store). */
  cluster?: () => Promise<ClusterStatus>;
  /** Where dashboard sessions and failed sign-ins are kept: in memory unless given (a cluster keeps them in Redis). */
  signIns?: { sessions: Sessions; throttle: SignInThrottle };
  /** The event streams each principal holds open (max_event_streams); unbounded when not given. */
  streams?: EventStreams;
  /** The open-file budget and the API's refusals, for GET /_status. */
  budget?: () => LimitsStatus;
}

export function createApp(opts: AppOptions): Hono<AuthEnv> {
  const { system } = opts;
  // One regular expression matches every path. Hono's default would fall back to a slower trie, for every
  // request, when a route puts a fixed segment beside a parameter; this router refuses such a route at start.
  const app = new Hono<AuthEnv>({ router: new RegExpRouter() });
  app.onError(errorHandler(opts.log));
  if (opts.observeRequest) app.use('*', requestMetrics(opts.observeRequest));
  // Built only when its lines are written: a request pays nothing for a disabled debug line.
  if (opts.log.enabled('debug')) app.use('*', requestLog(opts.log));
  app.notFound((c) => c.json({ error: ['not found'] }, 404));

  app.get('/_status', async (c) => {
    const answer = await runningStatus(system, opts.push, opts.storeFailing?.() ?? false, opts.cluster, opts.budget);
    return c.json(answer.body, answer.code);
  });
  const now = opts.now ?? Date.now;
  const sessionSeconds = opts.uiSessionSeconds ?? DEFAULT_UI_SESSION_SECONDS;
  const streams = opts.streams ?? new EventStreams(Infinity);
  app.route(
    UI,
    createUiApp({
      system,
      sessions: opts.signIns?.sessions ?? new MemorySessions(sessionSeconds * 1000, now),
      throttle: opts.signIns?.throttle ?? new MemorySignInThrottle(now),
      limits: opts.limits ?? DEFAULT_LIMITS,
      log: opts.log,
      now,
      sessionSeconds,
      streams,
    }),
  );
  app.use(
    '*',
    authenticate({
      system,
      skewSeconds: opts.authSkewSeconds,
      now,
      limits: opts.limits ?? DEFAULT_LIMITS,
      signatures: opts.signatures ?? new SignaturePool({ threads: 0 }),
    }),
  );

  aclRoutes(app, system);
  organizationRoutes(app, system);
  clientRoutes(app, system);
  groupRoutes(app, system);
  userRoutes(app, system);
  objectRoutes(app, system);
  pushyRoutes(app, system, streams);
  searchRoutes(app, system);
  return app;
}
