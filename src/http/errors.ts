// One error type for the HTTP facade and the one place that turns failures into responses: ApiError and
// actor replies keep their status and body; anything else is logged and answered 500 (reference 2).
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from '../lib/logger.js';

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: ContentfulStatusCode,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(JSON.stringify(body));
  }

  /** `{"error":["message"]}` */
  static of(status: ContentfulStatusCode, message: string): ApiError {
    return new ApiError(status, { error: [message] });
  }
}

/** Hono's onError: ApiError keeps its status and body; anything else is a bug, logged with its stack. */
export function errorHandler(log: Logger): (err: Error, c: Context) => Response {
  return (err, c) => {
    if (err instanceof ApiError) {
      for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
      return c.json(err.body, err.status);
    }
    log.error('request failed', { method: c.req.method, path: c.req.path, err });
    return c.json({ error: ['internal service error'] }, 500);
  };
}
