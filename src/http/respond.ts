// The few moves every route makes: send a request to the owning actor with the authenticated context,
// turn its reply into a response, and answer 405 for methods a path does not serve.
import type { Context, Hono } from 'hono';
import { promisify } from 'node:util';
import { constants as zlibConstants, gzip as zlibGzip } from 'node:zlib';
import type { Ref } from 'nact';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ask, type InfraSystem } from '../../actors/system.js';
import type { OrgOp } from '../../actors/org/handlers.js';
import type { Reply } from '../../actors/shared/reply.js';
import type { UserOp } from '../../actors/users/user-ops.js';
import type { AuthEnv } from './authenticate.js';
import { ApiError } from './errors.js';

export type Ctx = Context<AuthEnv>;

/**
 * JSON answers of this size or more go gzipped to a client that accepts it, as the original server's nginx front
 * sent them: a 10,000-node job is 600 KB, 60 KB compressed. Smaller ones cost more to compress than they save.
 */
export const GZIP_MIN_BYTES = 8192;
const gzip = promisify(zlibGzip);
const gzipJson = (json: string | Uint8Array): Promise<Buffer> => gzip(json, { level: zlibConstants.Z_BEST_SPEED });
/** An answer kept and sent many times (a large running job, polled) is compressed once. */
const keptGzips = new WeakMap<Uint8Array, Promise<Buffer>>();
function keptGzip(json: Uint8Array): Promise<Buffer> {
  let gzipped = keptGzips.get(json);
  if (gzipped === undefined) keptGzips.set(json, (gzipped = gzipJson(json)));
  return gzipped;
}

/** Whether an Accept-Encoding header takes gzip: named, or else covered by `*`, without `q=0`. */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [coding = '', ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    weights.set(coding, q === undefined ? 1 : Number(q.slice(2)));
  }
  const weight = weights.get('gzip') ?? weights.get('x-gzip') ?? weights.get('*') ?? 0;
  return weight > 0;
}

type Handler = (c: Ctx) => Promise<Response>;
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export async function send(c: Ctx, reply: Reply): Promise<Response> {
  if (reply.location !== undefined) c.header('Location', reply.location);
  const status = reply.status as ContentfulStatusCode;
  if (reply.raw === true && typeof reply.body === 'string') {
    if (reply.truncated === true) c.header('X-Output-Truncated', 'true');
    return c.body(reply.body, status, { 'Content-Type': 'application/octet-stream' });
  }
  const json = reply.json ?? JSON.stringify(reply.body);
  if (json.length < GZIP_MIN_BYTES) return c.body(json, status, { 'Content-Type': 'application/json' });
  c.header('Vary', 'Accept-Encoding');
  if (!acceptsGzip(c.req.header('accept-encoding')))
    return c.body(json, status, { 'Content-Type': 'application/json' });
  const gzipped = await (reply.json === undefined ? gzipJson(json) : keptGzip(reply.json));
  // zlib's output is never shared memory.
  const bytes = new Uint8Array(gzipped.buffer as ArrayBuffer, gzipped.byteOffset, gzipped.length);
  return c.body(bytes, status, {
    'Content-Type': 'application/json',
    'Content-Encoding': 'gzip',
  });
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
