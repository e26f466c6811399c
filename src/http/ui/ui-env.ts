// What every dashboard route shares: the Hono environment (the signed-in user's RequestContext and session), the
// parts the routes are built from, and the one error a route throws to answer with an error page.
import type { HttpBindings } from '@hono/node-server';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { InfraSystem } from '../../../actors/system.js';
import type { RequestContext } from '../../../actors/shared/reply.js';
import type { Logger } from '../../lib/logger.js';
import type { EventStreams } from '../event-streams.js';
import type { RequestLimits } from '../limits.js';
import type { Session, Sessions } from './sessions.js';
import type { SignInThrottle } from './sign-in-throttle.js';

/** Where the dashboard is mounted. */
export const UI = '/ui';

/** `Bindings` as in the API's AuthEnv: Node's request when served by @hono/node-server. */
export type UiEnv = {
  Bindings: Partial<HttpBindings> | undefined;
  Variables: { rc: RequestContext; session: Session };
};
export type UiCtx = Context<UiEnv>;

export interface UiDeps {
  system: InfraSystem;
  sessions: Sessions;
  throttle: SignInThrottle;
  limits: RequestLimits;
  log: Logger;
  now: () => number;
  /** Seconds a session lasts without a request: its cookie's Max-Age. */
  sessionSeconds: number;
  /** The event streams each user holds open (max_event_streams), the API's and the dashboard's together. */
  streams?: EventStreams;
}

/** A request the dashboard refuses or cannot answer: an error page with this status and message. */
export class PageError extends Error {
  override name = 'PageError';
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The address a request came from, for the sign-in throttle. */
export function remoteAddress(c: UiCtx): string {
  return c.env?.incoming?.socket.remoteAddress ?? 'unknown';
}
