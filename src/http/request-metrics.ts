// Times every API request for the metrics listener, labelled by the route pattern that took it: the raw path
// carries organization, node and job names, and a series per name would grow without end.
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';

/** `route` is a pattern (`/organizations/:org/nodes/:name`) or `unmatched`; `method` is one of METHODS or `other`. */
export type RequestObserver = (method: string, route: string, status: number, seconds: number) => void;

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

export function requestMetrics(observe: RequestObserver): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    // A failing handler does not throw here: Hono's onError has already turned it into c.res.
    await next();
    const method = METHODS.has(c.req.method) ? c.req.method : 'other';
    observe(method, routeOf(c), c.res.status, (performance.now() - started) / 1000);
  };
}

/**
 * The pattern of the route that answered; when a middleware answered first (authentication refusing a request),
 * the pattern of the first route the path matched; `unmatched` when none did (404).
 */
function routeOf(c: Context): string {
  const routes = matchedRoutes(c);
  const answered = routes[c.req.routeIndex]?.path;
  if (answered !== undefined && !isMiddleware(answered)) return answered;
  return routes.find((r) => !isMiddleware(r.path))?.path ?? 'unmatched';
}

/** Middleware is mounted on every path: `use('*')`, which Hono records as `/*`. */
function isMiddleware(path: string): boolean {
  return path === '/*' || path === '*';
}
