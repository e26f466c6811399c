// How the cli reaches its server: config.rb (found as spec 4.4's workstation does) with --server-url, --user
// and --key on top, and what its messages tell a user to check when the signed connection fails.
import { resolve } from 'node:path';
import { parseHttpUrl, splitServerUrl } from '../config/client-config.js';
import { findCliConfig, loadCliConfig } from '../config/cli-config.js';
import { type ApiConnection, type ApiTarget, type ApiWording, connect } from './api-connection.js';
import { CommandError, type Ui } from './terminal.js';

export interface CliTargetOptions {
  /** -c FILE */
  config?: string;
  serverUrl?: string;
  user?: string;
  key?: string;
  cwd: string;
  home: string;
}

/** The server, user and key the cli signs with, and the config.rb they came from. */
export interface CliTarget extends ApiTarget {
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
  const where =
    configFile === null
      ? 'no config.rb was found (-c FILE, .infra/config.rb here or in a parent folder, ~/.infra/config.rb)'
      : `${configFile} does not set it`;
  const serverUrl = o.serverUrl ?? config.server_url;
  if (serverUrl === undefined) throw CommandError.usage(`no server URL: ${where}; pass --server-url URL`);
  const split = parseServerUrl(serverUrl);
  if (split === null)
    throw CommandError.usage(`--server-url: '${serverUrl}' is not an http(s) URL like https://HOST/organizations/ORG`);
  const user = o.user ?? config.node_name;
  if (user === undefined)
    throw CommandError.usage(`no user name: node_name is missing because ${where}; pass --user NAME`);
  const keyFile = o.key !== undefined ? resolve(o.cwd, o.key) : config.client_key;
  if (keyFile === undefined)
    throw CommandError.usage(`no key: client_key is missing because ${where}; pass --key FILE`);
  return { serverUrl, ...split, user, keyFile, configFile };
}

/** What the cli's messages tell a user to check: the settings that named the user and the key. */
function cliWording(t: CliTarget): ApiWording {
  const config = t.configFile === null ? '' : ` in ${t.configFile}`;
  return {
    server: `the server at ${t.serverUrl}`,
    key: 'the key',
    keyHelp: [`It is named by ${t.configFile === null ? '--key' : `client_key in ${t.configFile} or --key`}.`],
    unauthorized: [
      `The server at ${t.serverUrl} did not accept user '${t.user}' signing with the key ${t.keyFile}.`,
      `Check node_name and client_key${config}, or pass --user NAME and --key FILE.`,
    ],
    forbidden: [`User '${t.user}' is authenticated, but not authorized for this action (403 Forbidden).`],
  };
}

/** The API as the configured user. */
export function connectCli(target: CliTarget): Promise<ApiConnection> {
  return connect(target, cliWording(target));
}

/** A stream the cli writes progress to: a terminal redraws one line in place. */
export interface Terminal {
  write(data: string | Uint8Array): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** What every command gets. */
export interface Cli {
  api: ApiConnection;
  ui: Ui;
  stdout: Terminal;
  stderr: Terminal;
  sleep(ms: number): Promise<void>;
}
