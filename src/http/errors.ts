// One error type for the HTTP facade and the one place that turns failures into responses: ApiError and
// actor replies keep their status and body; anything else is logged and answered 500 (reference 2).
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

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

export function onError(err: Error, c: Context): Response {
  if (err instanceof ApiError) {
    for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
    return c.json(err.body, err.status);
  }
  console.error(`request ${c.req.method} ${c.req.path} failed:`, err);
  return c.json({ error: ['internal service error'] }, 500);
}
