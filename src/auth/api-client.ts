// A signed HTTP client of the API, shared by infra-server-ctl, the cli and push-jobs-client: every request
// carries the signed headers of spec 5 and a JSON body.
import type { KeyObject } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { promisify } from 'node:util';
import { gunzip as zlibGunzip } from 'node:zlib';
import { isoSeconds } from '../lib/dates.js';
import { realTimers, type Timers } from '../lib/timers.js';
import { readPrivateKey } from './rsa-keys.js';
import { signRequest, type SignOptions, type SignVersion } from './signed-headers.js';

export interface ApiClientOptions {
  /** The server root, `http://host:port`; paths passed to `request` are absolute. */
  baseUrl: string;
  userId: string;
  /** A private key PEM or a parsed key. */
  key: string | KeyObject;
  version?: SignVersion;
  /** X-Ops-Server-API-Version to send (default 1). */
  apiVersion?: number;
  /** Milliseconds before a request is given up (default 30 s). */
  timeoutMs?: number;
  /** What times each request out; Node's unless a test runs the client on a clock of its own. */
  timers?: Timers;
}

export interface ApiResponse {
  status: number;
  body: unknown;
  headers: Headers;
}

export interface RawResponse {
  status: number;
  bytes: Buffer;
  headers: Headers;
}

/** An answer read to its end and let go: what a loop that only counts answers needs. */
export interface AnswerSize {
  status: number;
  size: number;
  headers: Headers;
}

/** The request did not reach the server, or its answer did not come back whole (the cause says why). */
export class ApiNetworkError extends Error {
  override name = 'ApiNetworkError';
}

/** No answer within the client's timeout. */
export class ApiTimeoutError extends Error {
  override name = 'TimeoutError';
}

/**
 * Connections kept open between requests, for the whole process. Requests go through node:http rather than
 * fetch: a load tester signing thousands of requests a second spent more of its time in fetch than in signing.
 */
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/** JSON when the answer is JSON; a proxy's error page or captured output stays text. */
export function parseAnswer(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A refused request, with the server's own error text. */
export class ApiRequestError extends Error {
  override name = 'ApiRequestError';
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly method: string,
    readonly path: string,
  ) {
    super(`${method} ${path}: ${status} ${errorText(body)}`);
  }
}

/** The message(s) of an `{"error": ...}` body, whichever envelope the endpoint uses. */
export function errorText(body: unknown): string {
  if (body !== null && typeof body === 'object' && 'error' in body) {
    const e = (body as { error: unknown }).error;
    if (Array.isArray(e)) return e.map(String).join('; ');
    if (typeof e === 'string') return e;
  }
  return typeof body === 'string' ? body : JSON.stringify(body);
}

export class ApiClient {
  private readonly key: KeyObject;
  /**
   * The signed headers of bodiless requests made in the current second, by method and path. A timestamp has a
   * one-second grain and RSA signing (PKCS #1 v1.5) is deterministic, so the same request in the same second is
   * signed the same: a loop polling a job reuses them instead of paying for a private-key operation per request.
   */
  private signedThisSecond = new Map<string, Readonly<Record<string, string>>>();
  private second = '';

  constructor(private readonly o: ApiClientOptions) {
    this.key = typeof o.key === 'string' ? readPrivateKey(o.key) : o.key;
  }

  /**
   * Sends one request and returns the answer's bytes as they came; any status is returned, none thrown. A Buffer
   * body is sent as it is (JSON already written), anything else as JSON.
   */
  async send(
    method: string,
    path: string,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<RawResponse> {
    const payload = body === undefined ? '' : Buffer.isBuffer(body) ? body.toString('utf8') : JSON.stringify(body);
    const url = new URL(path, this.o.baseUrl);
    const headers: Record<string, string> = {
      ...ACCEPT,
      ...this.signed(method, url, payload),
      ...extraHeaders,
    };
    if (payload !== '') headers['Content-Type'] = 'application/json';
    const res = await exchange({ url, method, headers, payload, ...this.bound(), keep: true });
    return { status: res.status, bytes: await decoded(res), headers: res.headers };
  }

  /**
   * A signed bodiless request whose answer is read but not kept: no copy of it is made, where a large answer
   * fetched in a loop (a 10,000-node job is 600 KB) would otherwise be gathered into one buffer each time.
   */
  async measure(method: string, path: string): Promise<AnswerSize> {
    const url = new URL(path, this.o.baseUrl);
    const headers = { ...ACCEPT, ...this.signed(method, url, '') };
    const res = await exchange({
      url,
      method,
      headers,
      payload: '',
      ...this.bound(),
      keep: false,
    });
    return { status: res.status, size: res.size, headers: res.headers };
  }

  /**
   * A signed GET of an event feed, its body left unread for the caller to follow; it ends when the server ends it
   * or `signal` aborts. Any status is returned, none thrown.
   */
  async stream(path: string, signal: AbortSignal, lastEventId?: string): Promise<Response> {
    const url = new URL(path, this.o.baseUrl);
    const headers: Record<string, string> = { Accept: 'text/event-stream', ...this.signed('GET', url, '') };
    if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
    return fetch(url, { headers, signal });
  }

  /** How long a request may take, on which timers. */
  private bound(): Pick<ExchangeRequest, 'timeoutMs' | 'timers'> {
    return { timeoutMs: this.o.timeoutMs ?? 30_000, timers: this.o.timers ?? realTimers };
  }

  /** The signed headers of one request (spec 5), in the protocol version the client was made with. */
  private signed(method: string, url: URL, payload: string): Readonly<Record<string, string>> {
    const timestamp = isoSeconds(Date.now());
    if (timestamp !== this.second) {
      this.second = timestamp;
      this.signedThisSecond = new Map();
    }
    const kept = payload === '' ? `${method} ${url.pathname}` : undefined;
    const known = kept === undefined ? undefined : this.signedThisSecond.get(kept);
    if (known !== undefined) return known;
    const signOptions: SignOptions = {
      privateKey: this.key,
      userId: this.o.userId,
      method,
      path: url.pathname,
      body: payload,
      serverApiVersion: this.o.apiVersion ?? 1,
      timestamp,
    };
    if (this.o.version !== undefined) signOptions.version = this.o.version;
    const headers = signRequest(signOptions);
    if (kept !== undefined) this.signedThisSecond.set(kept, headers);
    return headers;
  }

  /** Sends one request and parses a JSON answer; any status is returned, none thrown. */
  async request(
    method: string,
    path: string,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<ApiResponse> {
    const raw = await this.send(method, path, body, extraHeaders);
    return { status: raw.status, body: parseAnswer(raw.bytes), headers: raw.headers };
  }

  /** Like `request`, but a status of 300 or more throws ApiRequestError. */
  async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await this.request(method, path, body);
    if (res.status >= 300) throw new ApiRequestError(res.status, res.body, method, path);
    return res.body;
  }
}

/** Large JSON answers come gzipped when asked for (a 10,000-node job: 600 KB, 60 KB gzipped), as Chef's clients ask. */
const ACCEPT = { Accept: 'application/json', 'Accept-Encoding': 'gzip' } as const;
const gunzip = promisify(zlibGunzip);

/** The answer's bytes as the server meant them: a gzipped answer is unpacked; one that does not unpack is broken. */
async function decoded(res: Exchanged): Promise<Buffer> {
  const bytes = res.bytes ?? Buffer.alloc(0);
  if (res.headers.get('content-encoding')?.toLowerCase() !== 'gzip') return bytes;
  return gunzip(bytes).catch((e: unknown) => {
    throw new ApiNetworkError('the gzipped answer did not unpack', { cause: e });
  });
}

/** Methods that may be sent again: the same request twice leaves the server as once. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/**
 * One HTTP exchange over the process's kept-alive connections; the answer's bytes are gathered when `keep`. A kept
 * connection the server closed as idle just as the request went out fails with a reset before any answer; an
 * idempotent request is then sent once more, on a new connection.
 */
async function exchange(r: ExchangeRequest): Promise<Exchanged> {
  try {
    return await exchangeOnce(r);
  } catch (e) {
    if (!(e instanceof StaleConnectionError)) throw e;
    if (!IDEMPOTENT.has(r.method)) throw e.cause;
    // Not through the pool: its other kept connections may have been closed as idle at the same moment.
    return exchangeOnce({ ...r, fresh: true }).catch((again: unknown) => {
      throw again instanceof StaleConnectionError ? again.cause : again;
    });
  }
}

interface ExchangeRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  payload: string;
  timeoutMs: number;
  timers: Timers;
  /** Whether the answer's bytes are gathered. */
  keep: boolean;
  /** On a connection of its own, closed after the answer, rather than one kept open between requests. */
  fresh?: boolean;
}

interface Exchanged {
  status: number;
  bytes: Buffer | undefined;
  size: number;
  headers: Headers;
}

/** A reset of a reused connection before any answer came; its cause is the ApiNetworkError to report. */
class StaleConnectionError extends Error {}

function exchangeOnce({
  url,
  method,
  headers,
  payload,
  timeoutMs,
  timers,
  keep,
  fresh,
}: ExchangeRequest): Promise<Exchanged> {
  const tls = url.protocol === 'https:';
  if (!tls && url.protocol !== 'http:') return Promise.reject(new TypeError(`not an http(s) URL: ${url.href}`));
  return new Promise((resolve, reject) => {
    const options = { method, headers, agent: fresh === true ? false : tls ? agents.https : agents.http };
    let answered = false;
    const req = (tls ? httpsRequest : httpRequest)(url, options, (res: IncomingMessage) => {
      answered = true;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (keep) chunks.push(chunk);
      });
      res.on('error', failed);
      res.on('end', () => {
        cancelTimer();
        const bytes = keep ? Buffer.concat(chunks, size) : undefined;
        resolve({ status: res.statusCode ?? 0, bytes, size, headers: headersOf(res) });
      });
    });
    const cancelTimer = timers.after(timeoutMs, () =>
      req.destroy(new ApiTimeoutError(`${method} ${url.pathname}: no answer within ${timeoutMs} ms`)),
    );
    function failed(err: Error & { code?: string }): void {
      cancelTimer();
      if (err instanceof ApiTimeoutError) return reject(err);
      const network = new ApiNetworkError('request failed', { cause: err });
      const stale = req.reusedSocket && !answered && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
      reject(stale ? new StaleConnectionError('stale kept-alive connection', { cause: network }) : network);
    }
    req.on('error', failed);
    req.end(payload === '' ? undefined : payload);
  });
}

function headersOf(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}
