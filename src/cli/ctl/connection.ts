// How infra-server-ctl reaches its server: the server's own settings file (found as the server finds it),
// the API address from api_listen_address and api_port, and pivotal's key from data_dir (spec 4.6).
import { readFile } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import { join } from 'node:path';
import type { z } from 'zod';
import { ApiClient, errorText, type ApiResponse } from '../../auth/api-client.js';
import { loadServerConfig, SERVER_CONFIG_FILE_NAME, type ServerConfig, type ServerConfigSource } from '../../config/server-config.js';
import { CommandError, type Ui } from '../output.js';

/** The superuser whose key the server writes at first start; every ctl request is signed as it. */
export const CTL_USER = 'pivotal';

/** A wildcard listen address is reached on the loopback address. */
export function apiUrl(config: Pick<ServerConfig, 'api_listen_address' | 'api_port'>): string {
  const a = config.api_listen_address;
  const host = a === '0.0.0.0' || a === '::' ? '127.0.0.1' : a;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.api_port}`;
}

export interface CtlTarget {
  url: string;
  keyFile: string;
  /** The settings file read, or null when the defaults applied. */
  settingsFile: string | null;
}

/** Reads the settings like the server does; a ConfigError (FILE:LINE) propagates to the caller. */
export function ctlTarget(source: ServerConfigSource): CtlTarget {
  const { config, file } = loadServerConfig(source);
  return { url: apiUrl(config), keyFile: join(config.data_dir, `${CTL_USER}.pem`), settingsFile: file };
}

/** The API as pivotal, with the failures a ctl user can act on turned into CommandErrors. */
export class CtlApi {
  constructor(
    private readonly client: ApiClient,
    readonly target: CtlTarget,
  ) {}

  /** Any status is returned, except 401: this key is not pivotal's on that server, and no command can go on. */
  async request(method: string, path: string, body?: unknown): Promise<ApiResponse> {
    let res: ApiResponse;
    try {
      res = await this.client.request(method, path, body);
    } catch (e) {
      throw this.networkError(e);
    }
    if (res.status === 401) {
      throw new CommandError(`${errorText(res.body)} (401 Unauthorized)`, [
        `The key ${this.target.keyFile} is not the one the server at ${this.target.url} knows for ${CTL_USER}.`,
        'Check that -c names the settings file of the running server.',
      ]);
    }
    return res;
  }

  /** A 2xx answer parsed by `schema`; any other status stops the command with the server's error text. */
  async call<S extends z.ZodType>(method: string, path: string, schema: S, body?: unknown): Promise<z.output<S>> {
    const res = await this.request(method, path, body);
    if (res.status >= 300) throw apiFailure(res);
    const parsed = schema.safeParse(res.body);
    if (!parsed.success) {
      throw new CommandError(`unexpected answer to ${method} ${path}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    }
    return parsed.data;
  }

  private networkError(e: unknown): CommandError {
    if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
      return new CommandError(`infra-server at ${this.target.url} did not answer in time`, [], 1, { cause: e });
    }
    const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
    return new CommandError(`cannot reach infra-server at ${this.target.url}: is it running?`, [
      `(${e instanceof Error ? e.message : String(e)}${cause})`,
    ], 1, { cause: e });
  }
}

/** A refused request as the user sees it: the server's own text, then the status. */
export function apiFailure(res: ApiResponse): CommandError {
  const word = STATUS_CODES[res.status];
  return new CommandError(`${errorText(res.body)} (${res.status}${word === undefined ? '' : ` ${word}`})`);
}

/** Reads pivotal's key; a missing file says where it was looked for and why it may be missing. */
export async function connectCtl(source: ServerConfigSource): Promise<CtlApi> {
  const target = ctlTarget(source);
  let pem: string;
  try {
    pem = await readFile(target.keyFile, 'utf8');
  } catch (e) {
    const code = e instanceof Error && 'code' in e ? String(e.code) : String(e);
    const where = target.settingsFile === null
      ? `No settings file was given (-c FILE) and ./${SERVER_CONFIG_FILE_NAME} is missing, so data_dir is the default.`
      : `Is data_dir in ${target.settingsFile} the running server's?`;
    throw new CommandError(`cannot read the superuser key ${target.keyFile} (${code})`, [
      `The server writes it into its data_dir at first start. ${where}`,
    ], 1, { cause: e });
  }
  let client: ApiClient;
  try {
    client = new ApiClient({ baseUrl: target.url, userId: CTL_USER, key: pem });
  } catch (e) {
    throw new CommandError(`${target.keyFile} is not a usable private key`, [], 1, { cause: e });
  }
  return new CtlApi(client, target);
}

/** What every command gets: the API as pivotal and the terminal. */
export interface Ctl {
  api: CtlApi;
  ui: Ui;
}
