// Signing in to the dashboard with a user's name and password, and signing out. The sign-in form carries a
// token of its own, matched against a cookie set with the form (a session's token does not exist yet).
import { randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { z } from 'zod';
import { checkPassword, hashPassword } from '../../../auth/passwords.js';
import { cookieOptions, SESSION_COOKIE } from '../guard.js';
import { CsrfField, documentOf, Layout, type Notice } from '../pages/layout.js';
import { newToken, sameToken } from '../sessions.js';
import { PageError, remoteAddress, UI, type UiCtx, type UiDeps, type UiEnv } from '../ui-env.js';

const SIGN_IN_COOKIE = 'infra_sign_in';
const SIGN_IN_FORM_SECONDS = 3600;

const signInForm = z.object({
  username: z.string().max(255),
  password: z.string().max(1024),
  next: z.string().max(2048).optional(),
  _csrf: z.string().optional(),
});

const signOutForm = z.object({ _csrf: z.string().optional() });

/** An unknown name costs a password check too, so the time taken does not tell names apart. */
let standIn: Promise<string> | undefined;
const standInHash = () => (standIn ??= hashPassword(randomBytes(18).toString('base64url')));

export function signInRoutes(app: Hono<UiEnv>, deps: UiDeps): void {
  app.get('/sign-in', async (c) => {
    if (await deps.sessions.use(getCookie(c, SESSION_COOKIE))) return c.redirect(`${UI}/orgs`, 303);
    const notice: Notice | undefined =
      c.req.query('signed_out') !== undefined ? { kind: 'info', text: 'You are signed out.' } : undefined;
    return signInPage(c, 200, { next: c.req.query('next') ?? '', username: '', ...(notice ? { notice } : {}) });
  });

  app.post('/sign-in', async (c) => {
    const form = signInForm.safeParse(await c.req.parseBody());
    if (!form.success) throw new PageError(400, 'The sign-in form was incomplete.');
    const { username, password, next = '' } = form.data;
    const expected = getCookie(c, SIGN_IN_COOKIE);
    if (expected === undefined || !sameToken(form.data._csrf, expected)) {
      throw new PageError(403, 'This sign-in form did not come from the dashboard (its CSRF token is missing or old).');
    }
    const address = remoteAddress(c);
    const wait = await deps.throttle.waitMs(username, address);
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      const text = `Too many failed sign-ins. Wait ${seconds} second${seconds === 1 ? '' : 's'} and try again.`;
      return signInPage(c, 429, { next, username, notice: { kind: 'error', text } });
    }
    const stored = deps.system.principals.user(username)?.passwordHash;
    const right = (await checkPassword(password, stored ?? (await standInHash()))) && stored !== undefined;
    if (!right) {
      await deps.throttle.failed(username, address);
      deps.log.info('dashboard sign-in refused', { user: username, address });
      const notice: Notice = { kind: 'error', text: 'Wrong user name or password.' };
      return signInPage(c, 401, { next, username, notice });
    }
    await deps.throttle.succeeded(username);
    deps.log.info('dashboard sign-in', { user: username, address });
    const session = await deps.sessions.create(username);
    deleteCookie(c, SIGN_IN_COOKIE, { path: UI });
    setCookie(c, SESSION_COOKIE, session.id, cookieOptions(c, deps.sessionSeconds));
    return c.redirect(safeNext(next), 303);
  });

  // Outside the signed-in routes: signing out of a session that has already lapsed still lands on the sign-in page.
  app.post('/sign-out', async (c) => {
    const session = await deps.sessions.use(getCookie(c, SESSION_COOKIE));
    if (session) {
      const form = signOutForm.parse(await c.req.parseBody());
      if (!sameToken(form._csrf, session.csrf))
        throw new PageError(403, 'The sign-out form did not come from the dashboard.');
      await deps.sessions.drop(session.id);
    }
    deleteCookie(c, SESSION_COOKIE, { path: UI });
    return c.redirect(`${UI}/sign-in?signed_out`, 303);
  });
}

/** Only a dashboard path: a sign-in link must not send anyone elsewhere. */
function safeNext(next: string): string {
  return /^\/ui\/[^/\\]/.test(next) ? next : `${UI}/orgs`;
}

async function signInPage(
  c: UiCtx,
  status: 200 | 401 | 429,
  p: { next: string; username: string; notice?: Notice },
): Promise<Response> {
  const token = newToken();
  setCookie(c, SIGN_IN_COOKIE, token, cookieOptions(c, SIGN_IN_FORM_SECONDS));
  const page = (
    <Layout title="Sign in" {...(p.notice ? { notice: p.notice } : {})}>
      <div class="signin panel">
        <h1>Sign in</h1>
        <form method="post" action={`${UI}/sign-in`}>
          <CsrfField token={token} />
          <input type="hidden" name="next" value={p.next} />
          <label for="username">User name</label>
          <input type="text" id="username" name="username" value={p.username} autocomplete="username" required />
          <label for="password">Password</label>
          <input type="password" id="password" name="password" autocomplete="current-password" required />
          <button type="submit">Sign in</button>
        </form>
      </div>
    </Layout>
  );
  return c.html(await documentOf(page), status);
}
