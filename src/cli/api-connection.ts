// The signed connection both command-line tools talk through: the key read from its file, every request signed by
// the API client (spec 5), answers read through a zod schema, and the failures a user can act on (unreachable, 401,
// 403, an unusable key) turned into CommandErrors that say what to check. Each tool words those hints for its users.
import { readEventStream, type StreamItem } from '../api/event-stream.js';
import type { KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import type { z } from 'zod';
import { ApiClient, errorText, parseAnswer, type ApiResponse, type RawResponse } from '../auth/api-client.js';
import { readPrivateKey } from '../auth/rsa-keys.js';
import { codeOf, messageOf } from '../lib/thrown.js';
import { CommandError, EXIT } from './terminal.js';

/** Where requests go and whom they are signed as. */
export interface ApiTarget {
  /** The server URL as the user knows it, for messages. */
  serverUrl: string;
  /** Scheme, host and any path prefix in front of `/organizations`. */
  baseUrl: string;
  /** null when no organization is known: only paths outside organizations can be asked for. */
  org: string | null;
  user: string;
  keyFile: string;
}

/** How a tool's messages name things, and what they tell its users to check. */
export interface ApiWording {
  /** The server in messages: `the server at URL`. */
  server: string;
  /** The key in messages: `the key`. */
  key: string;
  /** Said under a key that cannot be read or used: which setting named it. */
  keyHelp: readonly string[];
  /** Said under a 401: what to check. */
  unauthorized: readonly string[];
  /** Said under a 403. Without it a 403 goes back to the command, which may expect one. */
  forbidden?: readonly string[];
}

/** A refused request as the user sees it: the server's own text, then the status. */
export function apiFailure(res: ApiResponse): CommandError {
  const word = STATUS_CODES[res.status];
  return new CommandError(`${errorText(res.body)} (${res.status}${word === undefined ? '' : ` ${word}`})`);
}

const seg = encodeURIComponent;

/** The API as the target's user, with the failures every command shares turned into CommandErrors. */
export class ApiConnection {
  private readonly prefix: string;

  constructor(
    private readonly client: ApiClient,
    readonly target: ApiTarget,
    private readonly says: ApiWording,
  ) {
    this.prefix = new URL(target.baseUrl).pathname.replace(/\/+$/, '');
  }

  get org(): string {
    if (this.target.org === null) {
      throw CommandError.usage(
        `the server URL ${this.target.serverUrl} names no organization: it should end in /organizations/ORG`,
      );
    }
    return this.target.org;
  }

  /** `/organizations/ORG/<segments>`, each segment encoded. */
  orgPath(...segments: string[]): string {
    return this.rootPath('organizations', this.org, ...segments);
  }

  /** A path from the server's root, such as `/users/NAME`, each segment encoded. */
  rootPath(...segments: string[]): string {
    return `${this.prefix}${segments.map((s) => `/${seg(s)}`).join('')}`;
  }

  /** Any status is returned except 401 (and 403 when the tool words it), after which no command can go on. */
  async request(method: string, path: string, body?: unknown): Promise<ApiResponse> {
    let res: ApiResponse;
    try {
      res = await this.client.request(method, path, body);
    } catch (e) {
      throw this.networkError(e);
    }
    this.refuse(res.status, res.body);
    return res;
  }

  /** A 2xx answer parsed by `schema`; any other status stops the command with the server's error text. */
  async call<S extends z.ZodType>(method: string, path: string, schema: S, body?: unknown): Promise<z.output<S>> {
    const res = await this.request(method, path, body);
    if (res.status >= 300) throw apiFailure(res);
    const parsed = schema.safeParse(res.body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const at = issue === undefined || issue.path.length === 0 ? '' : ` at ${issue.path.join('.')}`;
      throw new CommandError(`unexpected answer to ${method} ${path}${at}: ${issue?.message ?? 'invalid'}`);
    }
    return parsed.data;
  }

  /** A signed GET whose body is kept as bytes (job output is not JSON, even when it looks like JSON). */
  async getRaw(path: string): Promise<RawResponse> {
    let res: RawResponse;
    try {
      res = await this.client.send('GET', path, undefined, { Accept: 'application/octet-stream' });
    } catch (e) {
      throw this.networkError(e);
    }
    if (res.status >= 300) {
      const body = parseAnswer(res.bytes);
      this.refuse(res.status, body);
      throw apiFailure({ status: res.status, body, headers: res.headers });
    }
    return res;
  }

  /**
   * Follows an event feed: its items until the server ends it or `close` is called; null when the server does not
   * serve the feed as a stream (an older server, a proxy in the way), so the caller falls back to polling.
   */
  async feed(path: string): Promise<{ items: AsyncGenerator<StreamItem>; close(): void } | null> {
    const abort = new AbortController();
    let res: Response;
    try {
      res = await this.client.stream(path, abort.signal);
    } catch {
      return null;
    }
    const type = res.headers.get('content-type') ?? '';
    if (res.status !== 200 || res.body === null || !type.startsWith('text/event-stream')) {
      const body = parseAnswer(Buffer.from(await res.arrayBuffer()));
      this.refuse(res.status, body);
      return null;
    }
    return { items: readEventStream(res.body), close: () => abort.abort() };
  }

  private refuse(status: number, body: unknown): void {
    if (status === 401) throw new CommandError(`${errorText(body)} (401 Unauthorized)`, this.says.unauthorized);
    if (status === 403 && this.says.forbidden !== undefined) {
      // Spec 5.6, 5.7: authenticated but not authorized, said as "Missing read permission".
      const text = errorText(body);
      const message = /^missing \w+ permission$/i.test(text) ? `${text[0]?.toUpperCase() ?? ''}${text.slice(1)}` : text;
      throw new CommandError(message, this.says.forbidden);
    }
  }

  private networkError(e: unknown): CommandError {
    if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
      return new CommandError(`${this.says.server} did not answer in time`, [], EXIT.failed, { cause: e });
    }
    const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
    return new CommandError(
      `cannot reach ${this.says.server}: is it running?`,
      [`(${messageOf(e)}${cause})`],
      EXIT.failed,
      { cause: e },
    );
  }
}

/** Reads the target's key; a missing or unusable file says what to check. */
export async function connect(target: ApiTarget, says: ApiWording): Promise<ApiConnection> {
  let pem: string;
  try {
    pem = await readFile(target.keyFile, 'utf8');
  } catch (e) {
    const code = String(codeOf(e) ?? e);
    throw new CommandError(`cannot read ${says.key} ${target.keyFile} (${code})`, says.keyHelp, EXIT.failed, {
      cause: e,
    });
  }
  let key: KeyObject;
  try {
    key = readPrivateKey(pem);
  } catch (e) {
    const why = messageOf(e);
    throw new CommandError(`${target.keyFile} is not a usable private key: ${why}`, says.keyHelp, EXIT.failed, {
      cause: e,
    });
  }
  return new ApiConnection(new ApiClient({ baseUrl: target.baseUrl, userId: target.user, key }), target, says);
}
