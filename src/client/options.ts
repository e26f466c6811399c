// push-jobs-client's command line (spec 4.5) and how it overrides client.rb: the settings the client runs with.
import { messageOf } from '../lib/thrown.js';
import { VERSION } from '../lib/version.js';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  clientConfigSchema,
  DEFAULT_CLIENT_CONFIG_FILE,
  loadClientConfig,
  principalNameSchema,
  splitServerUrl,
  type ClientConfig,
} from '../config/client-config.js';
import { PROTOCOL_VERSION } from '../protocol/frames.js';
import { logLevels, readSettings, type LogLevel } from '../config/settings-file.js';
import type { LogTarget } from './logger.js';

export const USAGE = `Usage: push-jobs-client [OPTION VALUE ...]

  -c, --config CONFIG          configuration file (default: ${DEFAULT_CLIENT_CONFIG_FILE})
  -h, --help                   show this help
  -k, --client-key KEY_FILE    the client key file
  -l, --log_level LEVEL        log level: ${logLevels.join(', ')}
  -L, --logfile LOCATION       log file (default: the standard output)
  -N, --node-name NODE_NAME    node name
  -S, --server URL             server URL, ending in /organizations/ORG
  -v, --version                show the version`;

export function versionText(): string {
  return `push-jobs-client ${VERSION} (protocol ${PROTOCOL_VERSION})`;
}

/** What the command line says; absent fields leave client.rb's value. */
export interface ClientArgs {
  help: boolean;
  version: boolean;
  config?: string;
  clientKey?: string;
  logLevel?: LogLevel;
  logfile?: string;
  nodeName?: string;
  server?: string;
}

export type ParsedArgs = { ok: true; args: ClientArgs } | { ok: false; message: string };

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  help: { type: 'boolean', short: 'h' },
  'client-key': { type: 'string', short: 'k' },
  log_level: { type: 'string', short: 'l' },
  logfile: { type: 'string', short: 'L' },
  'node-name': { type: 'string', short: 'N' },
  server: { type: 'string', short: 'S' },
  version: { type: 'boolean', short: 'v' },
} as const;

const isLogLevel = (v: string): v is LogLevel => (logLevels as readonly string[]).includes(v);

export function parseClientArgs(argv: readonly string[]): ParsedArgs {
  let values;
  try {
    ({ values } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: false, strict: true }));
  } catch (e) {
    return { ok: false, message: messageOf(e) };
  }
  const args: ClientArgs = { help: values.help === true, version: values.version === true };
  const level = values.log_level;
  if (level !== undefined) {
    if (!isLogLevel(level))
      return { ok: false, message: `-l: unknown log level '${level}': use one of ${logLevels.join(', ')}` };
    args.logLevel = level;
  }
  const server = values.server;
  if (server !== undefined) {
    if (splitServerUrl(server) === null)
      return { ok: false, message: `-S: '${server}' is not an http(s) URL ending in /organizations/ORG` };
    args.server = server;
  }
  const node = values['node-name'];
  if (node !== undefined) {
    if (!principalNameSchema.safeParse(node).success)
      return { ok: false, message: `-N: '${node}' is not a name of letters, digits, ".", "_" and "-"` };
    args.nodeName = node;
  }
  const empty = (['config', 'client-key', 'logfile'] as const).find((k) => values[k] === '');
  if (empty !== undefined) return { ok: false, message: `--${empty} needs a value` };
  if (values.config !== undefined) args.config = values.config;
  if (values['client-key'] !== undefined) args.clientKey = values['client-key'];
  if (values.logfile !== undefined) args.logfile = values.logfile;
  return { ok: true, args };
}

/** Everything the running client needs, resolved: command line over client.rb over defaults. */
export interface ClientSettings {
  /**
   * The servers client.rb names (or -S), each as `https://host[:port][/prefix]`: API paths are
   * `/prefix/organizations/ORG/...` there. Tried in this order; a cluster's config answers add its members.
   */
  servers: readonly string[];
  org: string;
  nodeName: string;
  clientKey: string;
  validationClientName: string;
  validationKey: string;
  whitelist: Record<string, string>;
  logLevel: LogLevel;
  log: LogTarget;
  fileDir: string;
  allowUnencrypted: boolean;
}

/** Raised when the settings cannot make a runnable client (exit 2, like a broken client.rb). */
export class SettingsError extends Error {
  override name = 'SettingsError';
}

/**
 * client.rb from `-c` (which must exist), else the default file when it exists, else the defaults alone.
 * Throws ConfigError naming file and line for a broken file; `warnings` name the settings it skipped.
 */
export function readClientConfig(
  args: ClientArgs,
  cwd: string,
): { config: ClientConfig; file: string | null; warnings: string[] } {
  const warnings: string[] = [];
  const file =
    args.config !== undefined
      ? resolve(cwd, args.config)
      : existsSync(DEFAULT_CLIENT_CONFIG_FILE)
        ? DEFAULT_CLIENT_CONFIG_FILE
        : null;
  const config =
    file === null ? readSettings('', DEFAULT_CLIENT_CONFIG_FILE, clientConfigSchema) : loadClientConfig(file, warnings);
  return { config, file, warnings };
}

/**
 * Merges the command line over client.rb. Paths from the command line are taken from `cwd`, paths in client.rb
 * from that file's folder, so a config file works wherever the client is started.
 */
export function resolveSettings(
  args: ClientArgs,
  config: ClientConfig,
  configFile: string | null,
  cwd: string,
): ClientSettings {
  const serverUrls = args.server !== undefined ? [args.server] : config.server_url;
  if (serverUrls === undefined) {
    throw new SettingsError(
      `no server: set chef_server_url in ${configFile ?? DEFAULT_CLIENT_CONFIG_FILE} or pass -S URL`,
    );
  }
  const servers: string[] = [];
  let org = '';
  for (const serverUrl of serverUrls) {
    const split = splitServerUrl(serverUrl);
    if (split === null) throw new SettingsError(`'${serverUrl}' is not an http(s) URL ending in /organizations/ORG`);
    if (org !== '' && split.org !== org)
      throw new SettingsError(`the server URLs name two organizations, ${org} and ${split.org}`);
    org = split.org;
    if (!servers.includes(split.baseUrl)) servers.push(split.baseUrl);
  }
  const fromFile = (p: string) => resolve(configFile === null ? cwd : dirname(configFile), p);
  const location = config.log_location;
  let log: LogTarget;
  if (args.logfile !== undefined) log = { file: resolve(cwd, args.logfile) };
  else if (typeof location === 'string') log = { file: fromFile(location) };
  else log = { stream: location.constant === 'STDERR' ? 'stderr' : 'stdout' };
  return {
    servers,
    org,
    nodeName: args.nodeName ?? config.node_name,
    clientKey: args.clientKey !== undefined ? resolve(cwd, args.clientKey) : fromFile(config.client_key),
    validationClientName: config.validation_client_name ?? `${org}-validator`,
    validationKey: fromFile(config.validation_key),
    whitelist: { ...config.whitelist },
    logLevel: args.logLevel ?? config.log_level,
    log,
    fileDir: fromFile(config.file_dir),
    allowUnencrypted: config.allow_unencrypted,
  };
}
