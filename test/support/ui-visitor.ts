// A visitor of the web dashboard over plain HTTP for integration tests: keeps the cookies it is given, reads the
// CSRF token out of the last form it saw, and follows no redirect by itself so tests can check each one. A visitor
// may come from a loopback address of its own (127.0.0.2, ...), as different machines would.
import { request } from 'node:http';
export interface Page {
  status: number;
  html: string;
  headers: Headers;
  /** The Location header of a redirect, else ''. */
  location: string;
}

export class UiVisitor {
  /** The `_csrf` value of the last page that had a form. */
  csrf = '';

  constructor(
    private readonly baseUrl: string,
    private readonly from?: string,
    private readonly cookies = new Map<string, string>(),
  ) {}

  /**
   * The same browser reaching the dashboard at another address, as behind a load balancer in front of a cluster:
   * it shares this visitor's cookies (a cookie set through either is sent through both) and starts with its token.
   */
  through(baseUrl: string): UiVisitor {
    const other = new UiVisitor(baseUrl, this.from, this.cookies);
    other.csrf = this.csrf;
    return other;
  }

  async get(path: string, accept = 'text/html'): Promise<Page> {
    return this.send('GET', path, undefined, accept);
  }

  /** Posts a form; `_csrf` is the token last seen unless the fields say otherwise (null: left out). */
  async post(path: string, fields: Record<string, string>, csrf: string | null = this.csrf): Promise<Page> {
    const form = new URLSearchParams(fields);
    if (csrf !== null && !('_csrf' in fields)) form.set('_csrf', csrf);
    return this.send('POST', path, form);
  }

  /** Opens the sign-in page and sends `username` and `password` through it. */
  async signIn(username: string, password: string): Promise<Page> {
    await this.get('/ui/sign-in');
    return this.post('/ui/sign-in', { username, password });
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  private async send(method: string, path: string, form?: URLSearchParams, accept = 'text/html'): Promise<Page> {
    const headers: Record<string, string> = { Accept: accept };
    if (this.cookies.size > 0) headers.Cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const init: RequestInit = { method, headers, redirect: 'manual' };
    if (form) init.body = form;
    const res =
      this.from === undefined ? await fetch(new URL(path, this.baseUrl), init) : await this.sendFrom(path, init);
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const gone = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || pair.slice(eq + 1) === '';
      if (gone) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1));
    }
    const html = await res.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
    if (token !== undefined) this.csrf = token;
    return { status: res.status, html, headers: res.headers, location: res.headers.get('location') ?? '' };
  }

  /** The request over node:http, which can pick the source address (fetch cannot). */
  private sendFrom(path: string, init: RequestInit): Promise<Response> {
    const body = init.body instanceof URLSearchParams ? init.body.toString() : undefined;
    const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
    if (body !== undefined) headers['Content-Type'] = 'application/x-www-form-urlencoded';
    return new Promise((resolve, reject) => {
      const req = request(
        new URL(path, this.baseUrl),
        { method: init.method, headers, localAddress: this.from },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const answer = new Headers();
            for (const [name, value] of Object.entries(res.headers))
              for (const v of Array.isArray(value) ? value : [value ?? '']) answer.append(name, v);
            const status = res.statusCode ?? 0;
            resolve(new Response(status === 204 ? null : Buffer.concat(chunks), { status, headers: answer }));
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
}

/** The session cookie's line of a response, for checking its attributes. */
export function setCookieLine(page: Page, name: string): string {
  return page.headers.getSetCookie().find((l) => l.startsWith(`${name}=`)) ?? '';
}
