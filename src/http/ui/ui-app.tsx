// The web dashboard under /ui: sign-in, then pages answered through the same actors and ops as the API. Mounted
// before the API's signed-header authentication, which it replaces with a session cookie; every response gets a
// strict Content-Security-Policy (scripts only from here) and is never cached.
import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { documentOf, Layout } from './pages/layout.js';
import { requireMember, requireSession, viewerOf } from './guard.js';
import { JOB_SCRIPT, JOB_SCRIPT_PATH } from './job-script.js';
import { jobPageRoutes } from './routes/job.js';
import { jobRoutes } from './routes/jobs.js';
import { orgRoutes } from './routes/orgs.js';
import { scheduleRoutes } from './routes/schedules.js';
import { signInRoutes } from './routes/sign-in.js';
import type { Session } from './sessions.js';
import { PageError, UI, type UiCtx, type UiDeps, type UiEnv } from './ui-env.js';

/** A form is a few fields; the node list of a large job is the longest. */
export const MAX_FORM_BYTES = 4 * 1024 * 1024;

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function createUiApp(deps: UiDeps): Hono<UiEnv> {
  const ui = new Hono<UiEnv>();
  ui.onError(errorPage(deps));
  ui.use('*', securityHeaders);
  ui.use(
    '*',
    bodyLimit({
      maxSize: MAX_FORM_BYTES,
      onError: () => {
        throw new PageError(413, 'The form is too large.');
      },
    }),
  );

  ui.get('/', (c) => c.redirect(`${UI}/orgs`, 303));
  ui.get(JOB_SCRIPT_PATH.slice(UI.length), (c) =>
    c.body(JOB_SCRIPT, 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-cache' }),
  );
  signInRoutes(ui, deps);

  ui.use('/orgs', requireSession(deps));
  ui.use('/orgs/*', requireSession(deps));
  ui.use('/orgs/:org/*', requireMember(deps));
  orgRoutes(ui, deps);
  jobRoutes(ui, deps);
  jobPageRoutes(ui, deps);
  scheduleRoutes(ui, deps);

  // Every other /ui path ends here, never in the API's authentication.
  ui.all('*', () => {
    throw new PageError(404, 'There is no such page.');
  });
  return ui;
}

const securityHeaders: MiddlewareHandler<UiEnv> = async (c, next) => {
  await next();
  const h = c.res.headers;
  h.set('Content-Security-Policy', CSP);
  h.set('X-Content-Type-Options', 'nosniff');
  h.set('X-Frame-Options', 'DENY');
  h.set('Referrer-Policy', 'same-origin');
  if (!h.has('Cache-Control')) h.set('Cache-Control', 'no-store');
};

function errorPage(deps: UiDeps): (err: Error, c: UiCtx) => Promise<Response> {
  return async (err, c) => {
    const known = err instanceof PageError;
    if (!known) deps.log.error('dashboard request failed', { method: c.req.method, path: c.req.path, err });
    const status = known ? err.status : 500;
    const text = known ? err.message : 'Something went wrong on the server; it has been logged.';
    // Set only past the session check: a page refused before it has no signed-in user to show.
    const session: Session | undefined = c.var.session;
    const viewer = session === undefined ? {} : { viewer: viewerOf(c) };
    const title = status === 404 ? 'Not found' : status === 403 ? 'Not allowed' : 'Error';
    const page = (
      <Layout title={title} {...viewer} notice={{ kind: 'error', text }}>
        <p>
          <a href={`${UI}/orgs`}>Back to the organizations</a>
          {status === 401 ? (
            <>
              {' · '}
              <a href={`${UI}/sign-in`}>Sign in</a>
            </>
          ) : null}
        </p>
      </Layout>
    );
    return c.html(await documentOf(page), status);
  };
}
