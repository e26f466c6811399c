// What the HTTP port answers while the server starts: GET /_status says `starting`, every other path 503. The
// port is bound this early so that a script waiting on /_status sees the start, not a refused connection.
import { Hono } from 'hono';
import type { ClusterStatus } from '../api/status-schema.js';
import type { Logger } from '../lib/logger.js';
import type { Store } from '../store/store.js';
import type { AuthEnv } from './authenticate.js';
import { requestLog } from './request-log.js';
import { startingStatus } from './status-answer.js';

export interface StartingOptions {
  log: Logger;
  store: () => Store | undefined;
  /** This process among the others sharing its Redis store, once it joined them. */
  cluster?: () => Promise<ClusterStatus> | undefined;
}

export function createStartingApp(opts: StartingOptions): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.use('*', requestLog(opts.log));
  app.get('/_status', async (c) => {
    const answer = await startingStatus(opts.store(), opts.cluster);
    return c.json(answer.body, answer.code);
  });
  app.all('*', (c) => c.json({ error: ['The server is starting'] }, 503));
  return app;
}
