// Who is asking, for every dashboard route past sign-in: the session cookie names a live session, whose user
// still exists; from it comes the RequestContext the actors check, built as src/http/authenticate.ts builds a
// signed request's. Every POST must carry the session's CSRF token. Organization pages also need membership, the
// same check authentication makes for the API's organization paths.
import type { MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { CookieOptions } from 'hono/utils/cookie';
import type { RequestContext } from '../../../actors/shared/reply.js';
import type { UserPrincipal } from '../../../actors/shared/principals.js';
import type { Viewer } from './pages/layout.js';
import { sameToken } from './sessions.js';
import { PageError, UI, type UiCtx, type UiDeps, type UiEnv } from './ui-env.js';

export const SESSION_COOKIE = 'infra_session';

/** HttpOnly, SameSite=Strict, only under the dashboard's path, Secure when the request came over HTTPS. */
export function cookieOptions(c: UiCtx, maxAgeSeconds: number): CookieOptions {
  return { httpOnly: true, sameSite: 'Strict', path: UI, secure: protocolOf(c) === 'https', maxAge: maxAgeSeconds };
}

export function requireSession(deps: UiDeps): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    const session = await deps.sessions.use(getCookie(c, SESSION_COOKIE));
    const user = session && deps.system.principals.user(session.username);
    if (!session || !user) {
      // A deleted (or renamed) account signs out everywhere.
      if (session) await deps.sessions.drop(session.id);
      const wantsPage = c.req.method === 'GET' && (c.req.header('accept') ?? '').includes('text/html');
      if (wantsPage) return c.redirect(`${UI}/sign-in?next=${encodeURIComponent(c.req.path)}`, 303);
      throw new PageError(401, 'Sign in first.');
    }
    c.set('session', session);
    c.set('rc', contextFor(c, session.username, user));
    // Each request starts the session's timeout again; the cookie follows.
    setCookie(c, SESSION_COOKIE, session.id, cookieOptions(c, deps.sessionSeconds));
    if (c.req.method === 'POST') {
      const form = await c.req.parseBody();
      const sent = typeof form._csrf === 'string' ? form._csrf : undefined;
      if (!sameToken(sent, session.csrf)) {
        throw new PageError(403, 'This form did not come from your dashboard page (its CSRF token is missing or old).');
      }
    }
    await next();
  };
}

/** For `/orgs/:org/...`: the organization exists and the user belongs to it (superusers belong everywhere). */
export function requireMember(deps: UiDeps): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    const org = c.req.param('org') ?? '';
    const directory = deps.system.principals.org(org);
    if (!directory) throw new PageError(404, `Organization '${org}' does not exist.`);
    const r = c.get('rc').requestor;
    if (!r.superuser && !directory.isMember(r.name)) {
      throw new PageError(403, `'${r.name}' is not a member of organization '${org}'.`);
    }
    await next();
  };
}

/** The signed-in user, for the top bar and the forms' CSRF field. */
export function viewerOf(c: UiCtx): Viewer {
  const s = c.get('session');
  return { username: s.username, csrf: s.csrf };
}

/** The signed-in user as the actors see a signed request from that user: no key signed it. */
function contextFor(c: UiCtx, username: string, user: UserPrincipal): RequestContext {
  return {
    requestor: {
      kind: 'user',
      name: username,
      superuser: user.superuser,
      serverAdmin: user.serverAdmin,
      validator: false,
    },
    // As a signed request's: a page passed on by another member names the address the browser used.
    baseUrl: `${protocolOf(c)}://${c.req.header('x-forwarded-host') ?? c.req.header('host') ?? new URL(c.req.url).host}`,
    apiVersion: 1,
    authKey: '',
    authPublicKey: '',
  };
}

function protocolOf(c: UiCtx): string {
  return c.req.header('x-forwarded-proto') ?? new URL(c.req.url).protocol.replace(':', '');
}
