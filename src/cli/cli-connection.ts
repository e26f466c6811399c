// How the cli reaches its server: config.rb (found as spec 4.4's workstation does) with --server-url, --user
// and --key on top, the signed API client, and the failures a user can act on (unreachable, 401, 403).
import type { KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { z } from 'zod';
import { ApiClient, errorText, parseAnswer, type ApiResponse, type RawResponse } from '../auth/api-client.js';
import { readPrivateKey } from '../auth/keys.js';
import { parseHttpUrl, splitServerUrl } from '../config/client-config.js';
import { findCliConfig, loadCliConfig } from '../config/cli-config.js';
import { apiFailure } from './ctl/connection.js';
import { CommandError, EXIT, type Ui } from './output.js';

export interface CliTargetOptions {
  /** -c FILE */
  config?: string;
  serverUrl?: string;
  user?: string;
  key?: string;
  cwd: string;
  home: string;
}

export interface CliTarget {
  /** The server URL as given, for messages. */
  serverUrl: string;
  /** Scheme, host and any path prefix in front of `/organizations`. */
  baseUrl: string;
  /** null when the URL names no organization: only the global commands (user ...) can run. */
  org: string | null;
  user: string;
  keyFile: string;
  /** The config.rb read, or null when none was found. */
  configFile: string | null;
}

/** Splits a server URL; a bare `http(s)://host[/prefix]` is accepted without an organization. */
export function parseServerUrl(url: string): { baseUrl: string; org: string | null } | null {
  const split = splitServerUrl(url);
  if (split !== null) return split;
  const parsed = parseHttpUrl(url);
  if (parsed === null) return null;
  if (parsed.pathname.includes('/organizations')) return null;
  return { baseUrl: parsed.origin + parsed.pathname.replace(/\/+$/, ''), org: null };
}

/** Reads config.rb (a ConfigError propagates) and applies the overrides; something missing is a usage error. */
export function resolveCliTarget(o: CliTargetOptions): CliTarget {
  const explicit = o.config === undefined ? {} : { explicit: o.config };
  const configFile = findCliConfig({ ...explicit, cwd: o.cwd, home: o.home });
  const config = configFile === null ? {} : loadCliConfig(configFile);
  const where = configFile === null
    ? 'no config.rb was found (-c FILE, .infra/config.rb here or in a parent folder, ~/.infra/config.rb)'
    : `${configFile} does not set it`;
  const serverUrl = o.serverUrl ?? config.server_url;
  if (serverUrl === undefined) throw CommandError.usage(`no server URL: ${where}; pass --server-url URL`);
  const split = parseServerUrl(serverUrl);
  if (split === null) throw CommandError.usage(`--server-url: '${serverUrl}' is not an http(s) URL like https://HOST/organizations/ORG`);
  const user = o.user ?? config.node_name;
  if (user === undefined) throw CommandError.usage(`no user name: node_name is missing because ${where}; pass --user NAME`);
  const keyFile = o.key !== undefined ? resolve(o.cwd, o.key) : config.client_key;
  if (keyFile === undefined) throw CommandError.usage(`no key: client_key is missing because ${where}; pass --key FILE`);
  return { serverUrl, ...split, user, keyFile, configFile };
}

const seg = encodeURIComponent;


/** The API as the configured user, with the failures every command shares turned into CommandErrors. */
export class CliApi {
  private readonly prefix: string;

  constructor(
    private readonly client: ApiClient,
    readonly target: CliTarget,
  ) {
    this.prefix = new URL(target.baseUrl).pathname.replace(/\/+$/, '');
  }

  get org(): string {
    if (this.target.org === null) {
      throw CommandError.usage(`the server URL ${this.target.serverUrl} names no organization: it should end in /organizations/ORG`);
    }
    return this.target.org;
  }

  /** `/organizations/ORG/<segments>`, each segment encoded. */
  orgPath(...segments: string[]): string {
    return `${this.prefix}/organizations/${seg(this.org)}${segments.map((s) => `/${seg(s)}`).join('')}`;
  }

  /** A path outside any organization, such as `/users/NAME`. */
  rootPath(...segments: string[]): string {
    return `${this.prefix}${segments.map((s) => `/${seg(s)}`).join('')}`;
  }

  /** Any status is returned except 401 and 403, after which no command can go on. */
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
    return this.parse(method, path, schema, res.body);
  }

  private parse<S extends z.ZodType>(method: string, path: string, schema: S, body: unknown): z.output<S> {
    const parsed = schema.safeParse(body);
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

  private refuse(status: number, body: unknown): void {
    const t = this.target;
    if (status === 401) {
      const config = t.configFile === null ? '' : ` in ${t.configFile}`;
      throw new CommandError(`${errorText(body)} (401 Unauthorized)`, [
        `The server at ${t.serverUrl} did not accept user '${t.user}' signing with the key ${t.keyFile}.`,
        `Check node_name and client_key${config}, or pass --user NAME and --key FILE.`,
      ]);
    }
    if (status === 403) {
      // Spec 5.6, 5.7: authenticated but not authorized, said as "Missing read permission".
      const text = errorText(body);
      const message = /^missing \w+ permission$/i.test(text) ? `${text[0]?.toUpperCase() ?? ''}${text.slice(1)}` : text;
      throw new CommandError(message, [`User '${t.user}' is authenticated, but not authorized for this action (403 Forbidden).`]);
    }
  }

  private networkError(e: unknown): CommandError {
    const url = this.target.serverUrl;
    if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
      return new CommandError(`the server at ${url} did not answer in time`, [], EXIT.failed, { cause: e });
    }
    const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
    return new CommandError(`cannot reach the server at ${url}: is it running?`, [
      `(${e instanceof Error ? e.message : String(e)}${cause})`,
    ], EXIT.failed, { cause: e });
  }
}

/** Reads the user's key; a missing or unusable file says which setting named it. */
export async function connectCli(target: CliTarget): Promise<CliApi> {
  const from = target.configFile === null ? '--key' : `client_key in ${target.configFile} or --key`;
  let pem: string;
  try {
    pem = await readFile(target.keyFile, 'utf8');
  } catch (e) {
    const code = e instanceof Error && 'code' in e ? String(e.code) : String(e);
    throw new CommandError(`cannot read the key ${target.keyFile} (${code})`, [`It is named by ${from}.`], EXIT.failed, { cause: e });
  }
  let key: KeyObject;
  try {
    key = readPrivateKey(pem);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new CommandError(`${target.keyFile} is not a usable private key: ${why}`, [`It is named by ${from}.`], EXIT.failed, { cause: e });
  }
  return new CliApi(new ApiClient({ baseUrl: target.baseUrl, userId: target.user, key }), target);
}

/** A stream the cli writes progress to: a terminal redraws one line in place. */
export interface Terminal {
  write(data: string | Uint8Array): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** What every command gets. */
export interface Cli {
  api: CliApi;
  ui: Ui;
  stdout: Terminal;
  stderr: Terminal;
  sleep(ms: number): Promise<void>;
}
