// One debug line per HTTP request: method, path, status, duration, and the requestor once authenticated.
import type { MiddlewareHandler } from 'hono';
import type { RequestContext } from '../../actors/shared/reply.js';
import type { Logger } from '../lib/logger.js';
import type { AuthEnv } from './authenticate.js';

export function requestLog(log: Logger): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const started = performance.now();
    // A failing handler does not throw here: Hono's onError has already turned it into c.res.
    await next();
    const rc: RequestContext | undefined = c.get('rc');
    log.debug('request', {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      duration_ms: Math.round((performance.now() - started) * 10) / 10,
      ...(rc ? { requestor: rc.requestor.name } : {}),
    });
  };
}
