// Authentication of every API request (spec 5; reference 1.6), in the original server's order but with
// body validation after it: headers, timestamp, organization, principal lookup, signature, membership.
import type { HttpBindings } from '@hono/node-server';
import type { Context, MiddlewareHandler } from 'hono';
import type { KeyObject } from 'node:crypto';
import {
  API_MAX_VERSION,
  API_MIN_VERSION,
  parseServerApiVersion,
  readAuthHeaders,
  signatureCheckOf,
  WWW_AUTHENTICATE,
  type AuthHeaderResult,
} from '../auth/signed-headers.js';
import type { SignaturePool } from '../auth/signature-pool.js';
import type { InfraSystem } from '../../actors/system.js';
import type { SigningKey } from '../../actors/shared/principals.js';
import type { RequestContext } from '../../actors/shared/reply.js';
import { rememberRecent } from '../lib/remember.js';
import { ApiError } from './errors.js';
import type { RequestLimits } from './limits.js';

export const MAX_BODY_BYTES = 1_000_000;
const API_VERSION_HEADER = 'X-Ops-Server-API-Version';
/** `Bindings`: Node's request and response when served by @hono/node-server; absent when a test calls app.request. */
export type AuthEnv = {
  Bindings: Partial<HttpBindings> | undefined;
  Variables: { rc: RequestContext; rawBody: Buffer; orgName: string | undefined; limits: RequestLimits };
};

export interface AuthOptions {
  system: InfraSystem;
  skewSeconds: number;
  now: () => number;
  /** Handed on with the body, for the routes that parse it. */
  limits: RequestLimits;
  /** Where the RSA checks run. */
  signatures: SignaturePool;
}

/** `/organizations/ORG/...` names an organization; `/organizations` alone does not. */
export function orgOfPath(path: string): string | undefined {
  const m = /^\/organizations\/([^/]+)/.exec(path);
  if (m?.[1] === undefined) return undefined;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    // A malformed escape names no organization we could hold; keep it as sent, like the router does.
    return m[1];
  }
}

export function authenticate(opts: AuthOptions): MiddlewareHandler<AuthEnv> {
  const { system } = opts;
  return async (c, next) => {
    const url = new URL(c.req.url);
    const header = headerReader(c);
    c.header(API_VERSION_HEADER, apiVersionHeader(header('x-ops-server-api-version')));
    const headers = readAuthHeaders(header, opts.now(), opts.skewSeconds);
    if (!headers.ok) throw authFailure(headers);
    const { auth } = headers;

    // After the header checks, before the organization and the signature (reference 1.6 step 1.4).
    const tooLarge = () => new ApiError(413, { error: `JSON must be no more than ${MAX_BODY_BYTES} bytes.` });
    if (Number(header('content-length') ?? 0) > MAX_BODY_BYTES) throw tooLarge();
    // A GET or HEAD has no body: reading one would build a whole Web Request for nothing.
    const method = c.req.method;
    const rawBody = method === 'GET' || method === 'HEAD' ? EMPTY : Buffer.from(await c.req.arrayBuffer());
    if (rawBody.length > MAX_BODY_BYTES) throw tooLarge();

    const orgName = orgOfPath(url.pathname);
    // Principals come from the directory the actors keep current: no ask before the one that answers.
    const org = orgName === undefined ? undefined : system.principals.org(orgName);
    if (orgName !== undefined && !org) throw ApiError.of(404, `organization '${orgName}' does not exist.`);
    const user = system.principals.user(auth.userId);
    const client = org?.client(auth.userId);
    const now = opts.now();

    // Users first, then the organization's client of the same name (reference 1.6 step 2).
    const candidates = [...usableKeys(user?.keys, 'user', now), ...usableKeys(client?.keys, 'client', now)];
    if (candidates.length === 0) {
      throw ApiError.of(
        401,
        `Failed to authenticate as '${auth.userId}'. Ensure that your node_name and client key are correct.`,
      );
    }
    // A key whose PEM holds no RSA public key verifies nothing.
    const usable = candidates.filter((k): k is Candidate & { publicKey: KeyObject } => k.publicKey !== null);
    const keys = usable.map((k) => k.publicKey);
    const check = signatureCheckOf(auth, keys, method, url.pathname, rawBody);
    const winner = usable[check === null ? -1 : await opts.signatures.check(check)];
    if (!winner) {
      throw new ApiError(
        401,
        { error: [`Invalid signature for user or client '${auth.userId}'`] },
        { 'WWW-Authenticate': WWW_AUTHENTICATE },
      );
    }

    const isUser = winner.kind === 'user';
    const superuser = isUser && (user?.superuser ?? false);
    if (isUser && org && !superuser && !org.isMember(auth.userId)) {
      throw ApiError.of(403, `'${auth.userId}' not associated with organization '${orgName}'`);
    }
    const proto = header('x-forwarded-proto') ?? url.protocol.replace(':', '');
    c.set('rc', {
      requestor: {
        kind: winner.kind,
        name: auth.userId,
        superuser,
        serverAdmin: isUser && (user?.serverAdmin ?? false),
        validator: !isUser && (client?.validator ?? false),
      },
      // A request another process of the cluster passed on names the address the client used.
      baseUrl: `${proto}://${header('x-forwarded-host') ?? header('host') ?? url.host}`,
      apiVersion: auth.serverApiVersion,
      authKey: winner.key.name,
      authPublicKey: winner.key.pem,
    });
    c.set('rawBody', rawBody);
    c.set('limits', opts.limits);
    c.set('orgName', orgName);
    await next();
  };
}

const EMPTY = Buffer.alloc(0);

interface Candidate {
  kind: 'user' | 'client';
  key: SigningKey;
  publicKey: KeyObject | null;
}

/** A principal's keys that may sign now, in their order. */
function usableKeys(keys: readonly SigningKey[] | undefined, kind: Candidate['kind'], nowMs: number): Candidate[] {
  const out: Candidate[] = [];
  for (const key of keys ?? []) if (key.usableAt(nowMs)) out.push({ kind, key, publicKey: key.publicKey });
  return out;
}

/**
 * Request headers from Node's own parsed ones when the server runs on Node (the env of @hono/node-server), so
 * no Web Headers object is built per request; elsewhere (tests calling app.request) through Hono.
 */
function headerReader(c: Context<AuthEnv>): (lowerCaseName: string) => string | undefined {
  const incoming = c.env?.incoming;
  if (!incoming) return (name) => c.req.header(name);
  return (name) => {
    const value = incoming.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
}

/** Every answer says which API versions the server speaks and which one it used (reference 1.6 step 4); clients
 * send the same few values, so each answer is built once. */
const apiVersionHeader = rememberRecent(64, (raw: string | undefined): string => {
  const api = parseServerApiVersion(raw);
  return JSON.stringify({
    min_version: String(API_MIN_VERSION),
    max_version: String(API_MAX_VERSION),
    request_version: String(api.ok ? api.version : api.requestVersion),
    response_version: String(api.ok ? api.version : -1),
  });
});

function authFailure(r: AuthHeaderResult & { ok: false }): ApiError {
  return new ApiError(r.status, r.body, r.wwwAuthenticate ? { 'WWW-Authenticate': WWW_AUTHENTICATE } : {});
}
