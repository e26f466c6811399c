// The few moves every route makes: send a request to the owning actor with the authenticated context,
// turn its reply into a response, and answer 405 for methods a path does not serve.
import type { Context, Hono } from 'hono';
import type { Ref } from 'nact';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ask, type InfraSystem } from '../../actors/system.js';
import type { OrgOp } from '../../actors/org/handlers.js';
import type { Reply } from '../../actors/shared/reply.js';
import type { UserOp } from '../../actors/users/user-ops.js';
import type { AuthEnv } from './authenticate.js';
import { ApiError } from './errors.js';

export type Ctx = Context<AuthEnv>;
type Handler = (c: Ctx) => Promise<Response>;
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export function send(c: Ctx, reply: Reply): Response {
  if (reply.location !== undefined) c.header('Location', reply.location);
  if (reply.raw === true && typeof reply.body === 'string') {
    if (reply.truncated === true) c.header('X-Output-Truncated', 'true');
    return c.body(reply.body, reply.status as ContentfulStatusCode, { 'Content-Type': 'application/octet-stream' });
  }
  if (reply.json !== undefined)
    return c.body(reply.json, reply.status as ContentfulStatusCode, { 'Content-Type': 'application/json' });
  return c.json(reply.body as object, reply.status as ContentfulStatusCode);
}

/** The organization's reply to `op`, for handlers that must look at it before answering. */
export async function queryOrg(c: Ctx, system: InfraSystem, op: OrgOp): Promise<Reply> {
  const name = c.get('orgName');
  const ref = name === undefined ? undefined : system.org(name);
  if (!ref) throw ApiError.of(404, `organization '${name ?? ''}' does not exist.`);
  const ctx = c.get('rc');
  return ask(ref, (replyTo: Ref<Reply>) => ({ type: 'request' as const, ctx, op, replyTo }));
}

export async function askOrg(c: Ctx, system: InfraSystem, op: OrgOp): Promise<Response> {
  return send(c, await queryOrg(c, system, op));
}

export async function askUsers(c: Ctx, system: InfraSystem, op: UserOp): Promise<Response> {
  const ctx = c.get('rc');
  return send(c, await ask(system.users, (replyTo: Ref<Reply>) => ({ type: 'request' as const, ctx, op, replyTo })));
}

/** Registers a path's methods and a 405 for every other method (reference 5.1). */
export function route(app: Hono<AuthEnv>, path: string, handlers: Partial<Record<Method, Handler>>): void {
  for (const [method, h] of Object.entries(handlers) as Array<[Method, Handler]>) app.on(method, path, h);
  const allowed = Object.keys(handlers).join(', ');
  app.all(path, (c) => notAllowed(c, allowed));
}

/** The 405 of a method a path does not serve, naming those it does. */
export function notAllowed(c: Ctx, allowed: string): Response {
  c.header('Allow', allowed);
  return c.json({ error: [`Method ${c.req.method} not allowed on ${c.req.path}`] }, 405);
}

/** A path parameter, decoded by the router. */
export function param(c: Ctx, name: string): string {
  const v = c.req.param(name);
  if (v === undefined) throw ApiError.of(404, 'not found');
  return v;
}
