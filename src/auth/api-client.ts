// A signed HTTP client of the API, shared by infra-server-ctl, the cli and push-jobs-client: every request
// carries the signed headers of spec 5 and a JSON body.
import type { KeyObject } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { readPrivateKey } from './keys.js';
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
      Accept: 'application/json',
      ...this.signed(method, url, payload),
      ...extraHeaders,
    };
    if (payload !== '') headers['Content-Type'] = 'application/json';
    return exchange(url, method, headers, payload, this.o.timeoutMs ?? 30_000);
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

  /** The signed headers of one request (spec 5), in the protocol version the client was made with. */
  private signed(method: string, url: URL, payload: string): Record<string, string> {
    const signOptions: SignOptions = {
      privateKey: this.key,
      userId: this.o.userId,
      method,
      path: url.pathname,
      body: payload,
      serverApiVersion: this.o.apiVersion ?? 1,
    };
    if (this.o.version !== undefined) signOptions.version = this.o.version;
    return signRequest(signOptions);
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

/** One HTTP exchange over the process's kept-alive connections. */
function exchange(
  url: URL,
  method: string,
  headers: Record<string, string>,
  payload: string,
  timeoutMs: number,
): Promise<RawResponse> {
  const tls = url.protocol === 'https:';
  if (!tls && url.protocol !== 'http:') return Promise.reject(new TypeError(`not an http(s) URL: ${url.href}`));
  return new Promise((resolve, reject) => {
    const options = { method, headers, agent: tls ? agents.https : agents.http };
    const req = (tls ? httpsRequest : httpRequest)(url, options, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', failed);
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks), headers: headersOf(res) });
      });
    });
    const timer = setTimeout(
      () => req.destroy(new ApiTimeoutError(`${method} ${url.pathname}: no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    function failed(err: Error): void {
      clearTimeout(timer);
      reject(err instanceof ApiTimeoutError ? err : new ApiNetworkError('request failed', { cause: err }));
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
