// The frame of every dashboard page: the top bar (organization links, the signed-in user, sign-out), a notice,
// and the page itself. Also the small pieces pages share: status badges, times, the CSRF field.
import type { FC, PropsWithChildren } from 'hono/jsx';
import type { HtmlEscapedString } from 'hono/utils/html';
import { httpDate, parseHttpDate } from '../../../lib/dates.js';
import { UI } from '../ui-env.js';
import { STYLESHEET } from './styles.js';

export interface Viewer {
  username: string;
  csrf: string;
}

export interface Notice {
  kind: 'error' | 'info';
  text: string;
}

export interface LayoutProps {
  title: string;
  viewer?: Viewer;
  /** The organization the page belongs to, for the org links of the top bar. */
  org?: string;
  /** Which of the org links is the page. */
  here?: 'nodes' | 'jobs' | 'schedules';
  notice?: Notice;
  /** Scripts served by the dashboard itself (Content-Security-Policy allows no other). */
  scripts?: string[];
}

export const Layout: FC<PropsWithChildren<LayoutProps>> = (p) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{p.title} · infra-server</title>
      <style dangerouslySetInnerHTML={{ __html: STYLESHEET }} />
      {(p.scripts ?? []).map((src) => (
        <script src={src} defer />
      ))}
    </head>
    <body>
      <header class="top">
        <a class="brand" href={`${UI}/orgs`}>
          infra-server
        </a>
        <nav>
          {p.org !== undefined && p.viewer !== undefined ? (
            <>
              <a href={`${UI}/orgs`}>Organizations</a>
              <span class="org">{p.org}</span>
              <a class={p.here === 'nodes' ? 'here' : ''} href={orgPath(p.org, 'nodes')}>
                Nodes
              </a>
              <a class={p.here === 'jobs' ? 'here' : ''} href={orgPath(p.org, 'jobs')}>
                Jobs
              </a>
              <a class={p.here === 'schedules' ? 'here' : ''} href={orgPath(p.org, 'schedules')}>
                Schedules
              </a>
            </>
          ) : null}
        </nav>
        {p.viewer ? (
          <div class="who">
            <span>{p.viewer.username}</span>
            <form class="inline" method="post" action={`${UI}/sign-out`}>
              <CsrfField token={p.viewer.csrf} />
              <button class="plain" type="submit">
                Sign out
              </button>
            </form>
          </div>
        ) : null}
      </header>
      <main>
        {p.notice ? (
          <div class={`flash ${p.notice.kind}`} role={p.notice.kind === 'error' ? 'alert' : 'status'}>
            {p.notice.text}
          </div>
        ) : null}
        {p.children}
      </main>
    </body>
  </html>
);

/** `/ui/orgs/ORG/...`, each part escaped. */
export function orgPath(org: string, ...parts: string[]): string {
  return [`${UI}/orgs`, org, ...parts].map((s, i) => (i === 0 ? s : encodeURIComponent(s))).join('/');
}

export const CsrfField: FC<{ token: string }> = ({ token }) => <input type="hidden" name="_csrf" value={token} />;

/** A status in its colour. */
export const Status: FC<{ status: string; testid?: string }> = ({ status, testid }) => (
  <span class={`st st-${status}`} data-status={status} data-testid={testid}>
    {status.replaceAll('_', ' ')}
  </span>
);

/** An HTTP date as `2026-11-21 10:35:19 UTC`; none as nothing, and text that is no date as it is. */
export function shortHttpDate(at: string | null): string {
  if (at === null) return '';
  const ms = parseHttpDate(at);
  return ms === undefined ? at : shortDate(ms);
}

/** An HTTP date as `2026-11-21 10:35:19 UTC`, with how long ago it was. */
export const When: FC<{ at: string | null; now: number }> = ({ at, now }) => {
  if (at === null) return <span class="muted">never heard</span>;
  const ms = parseHttpDate(at);
  if (ms === undefined) return <span>{at}</span>;
  return (
    <time datetime={new Date(ms).toISOString()} title={httpDate(ms)}>
      {shortDate(ms)} <span class="muted">({ago(now - ms)})</span>
    </time>
  );
};

export function shortDate(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
}

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

/** Renders a page as a whole HTML document. A component tree's toString() may be a promise (async parts). */
export async function documentOf(page: HtmlEscapedString | Promise<HtmlEscapedString>): Promise<string> {
  return `<!doctype html>${await (await page).toString()}`;
}
