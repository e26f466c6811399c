// Authentication of every API request (spec 5; reference 1.6), in the original server's order but with
// body validation after it: headers, timestamp, organization, principal lookup, signature, membership.
import type { MiddlewareHandler } from 'hono';
import type { KeyObject } from 'node:crypto';
import type { Ref } from 'nact';
import {
  API_MAX_VERSION, API_MIN_VERSION, parseServerApiVersion, readAuthHeaders, verifyRequest, WWW_AUTHENTICATE, type AuthHeaderResult,
} from '../auth/signed-headers.js';
import { parsePublicKey } from '../auth/keys.js';
import { ask, type InfraSystem } from '../../actors/system.js';
import type { OrgPrincipal } from '../../actors/org.js';
import type { UserPrincipal } from '../../actors/users.js';
import type { RequestContext } from '../../actors/reply.js';
import { ApiError } from './errors.js';

export const MAX_BODY_BYTES = 1_000_000;
const API_VERSION_HEADER = 'X-Ops-Server-API-Version';

export type AuthEnv = { Variables: { rc: RequestContext; rawBody: Buffer; orgName: string | undefined } };

export interface AuthOptions {
  system: InfraSystem;
  skewSeconds: number;
  now: () => number;
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
    c.header(API_VERSION_HEADER, apiVersionHeader(c.req.header(API_VERSION_HEADER)));
    const headers = readAuthHeaders((n) => c.req.header(n), opts.now(), opts.skewSeconds);
    if (!headers.ok) throw authFailure(headers);
    const { auth } = headers;

    // After the header checks, before the organization and the signature (reference 1.6 step 1.4).
    const tooLarge = () => new ApiError(413, { error: `JSON must be no more than ${MAX_BODY_BYTES} bytes.` });
    if (Number(c.req.header('content-length') ?? 0) > MAX_BODY_BYTES) throw tooLarge();
    const rawBody = Buffer.from(await c.req.arrayBuffer());
    if (rawBody.length > MAX_BODY_BYTES) throw tooLarge();

    const orgName = orgOfPath(url.pathname);
    const orgRef = orgName === undefined ? undefined : system.org(orgName);
    const missingOrg = () => ApiError.of(404, `organization '${orgName}' does not exist.`);
    if (orgName !== undefined && !orgRef) throw missingOrg();

    const [user, org] = await Promise.all([
      ask(system.users, (replyTo: Ref<UserPrincipal | null>) => ({ type: 'principal' as const, name: auth.userId, replyTo })),
      orgRef ? ask(orgRef, (replyTo: Ref<OrgPrincipal | null>) => ({ type: 'principal' as const, name: auth.userId, replyTo })) : Promise.resolve(undefined),
    ]);
    if (org === null) throw missingOrg();

    // Users first, then the organization's client of the same name (reference 1.6 step 2).
    const candidates = [...(user?.keys ?? []).map((k) => ({ ...k, kind: 'user' as const })), ...(org?.clientKeys ?? []).map((k) => ({ ...k, kind: 'client' as const }))];
    if (candidates.length === 0) {
      throw ApiError.of(401, `Failed to authenticate as '${auth.userId}'. Ensure that your node_name and client key are correct.`);
    }
    const usable = candidates.map((k) => ({ ...k, key: parsePublicKey(k.pem) })).filter((k): k is typeof k & { key: KeyObject } => k.key !== null);
    const index = verifyRequest(auth, usable.map((k) => k.key), c.req.method, url.pathname, rawBody);
    const winner = usable[index];
    if (!winner) {
      throw new ApiError(401, { error: [`Invalid signature for user or client '${auth.userId}'`] }, { 'WWW-Authenticate': WWW_AUTHENTICATE });
    }

    const isUser = winner.kind === 'user';
    const superuser = isUser && (user?.superuser ?? false);
    if (isUser && orgRef && !superuser && !org?.member) {
      throw ApiError.of(403, `'${auth.userId}' not associated with organization '${orgName}'`);
    }
    const proto = c.req.header('x-forwarded-proto') ?? url.protocol.replace(':', '');
    c.set('rc', {
      requestor: {
        kind: winner.kind, name: auth.userId, superuser,
        serverAdmin: isUser && (user?.serverAdmin ?? false),
        validator: !isUser && (org?.validator ?? false),
      },
      baseUrl: `${proto}://${c.req.header('host') ?? url.host}`,
      apiVersion: auth.serverApiVersion,
      authKey: winner.name,
      authPublicKey: winner.pem,
    });
    c.set('rawBody', rawBody);
    c.set('orgName', orgName);
    await next();
  };
}

/** Every answer says which API versions the server speaks and which one it used (reference 1.6 step 4). */
function apiVersionHeader(raw: string | undefined): string {
  const api = parseServerApiVersion(raw);
  return JSON.stringify({
    min_version: String(API_MIN_VERSION),
    max_version: String(API_MAX_VERSION),
    request_version: String(api.ok ? api.version : api.requestVersion),
    response_version: String(api.ok ? api.version : -1),
  });
}

function authFailure(r: AuthHeaderResult & { ok: false }): ApiError {
  return new ApiError(r.status, r.body, r.wwwAuthenticate ? { 'WWW-Authenticate': WWW_AUTHENTICATE } : {});
}
