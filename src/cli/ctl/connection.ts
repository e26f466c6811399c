// How infra-server-ctl reaches its server: the server's own settings file (found as the server finds it),
// the API address from api_listen_address and api_port, and pivotal's key from data_dir (spec 4.6); and what its
// messages tell a user to check when the signed connection fails.
import { join } from 'node:path';
import {
  loadServerConfig,
  SERVER_CONFIG_FILE_NAME,
  type ServerConfig,
  type ServerConfigSource,
} from '../../config/server-config.js';
import { type ApiConnection, type ApiTarget, type ApiWording, connect } from '../api-connection.js';
import type { Ui } from '../terminal.js';

/** The superuser whose key the server writes at first start; every ctl request is signed as it. */
export const CTL_USER = 'pivotal';

/** A wildcard listen address is reached on the loopback address. */
export function apiUrl(config: Pick<ServerConfig, 'api_listen_address' | 'api_port'>): string {
  const a = config.api_listen_address;
  const host = a === '0.0.0.0' || a === '::' ? '127.0.0.1' : a;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.api_port}`;
}

export interface CtlTarget extends ApiTarget {
  /** The settings file read, or null when the defaults applied. */
  settingsFile: string | null;
}

/** Reads the settings like the server does; a ConfigError (FILE:LINE) propagates to the caller. */
export function ctlTarget(source: ServerConfigSource): CtlTarget {
  const { config, file } = loadServerConfig(source);
  const url = apiUrl(config);
  return {
    serverUrl: url,
    baseUrl: url,
    org: null,
    user: CTL_USER,
    keyFile: join(config.data_dir, `${CTL_USER}.pem`),
    settingsFile: file,
  };
}

/** What infra-server-ctl's messages tell a user to check: that -c names the running server's settings. */
function ctlWording(t: CtlTarget): ApiWording {
  const where =
    t.settingsFile === null
      ? `No settings file was given (-c FILE) and ./${SERVER_CONFIG_FILE_NAME} is missing, so data_dir is the default.`
      : `Is data_dir in ${t.settingsFile} the running server's?`;
  return {
    server: `infra-server at ${t.serverUrl}`,
    key: 'the superuser key',
    keyHelp: [`The server writes it into its data_dir at first start. ${where}`],
    unauthorized: [
      `The key ${t.keyFile} is not the one the server at ${t.serverUrl} knows for ${CTL_USER}.`,
      'Check that -c names the settings file of the running server.',
    ],
  };
}

/** The API as pivotal. */
export async function connectCtl(source: ServerConfigSource): Promise<ApiConnection> {
  const target = ctlTarget(source);
  return connect(target, ctlWording(target));
}

/** What every command gets: the API as pivotal and the terminal. */
export interface Ctl {
  api: ApiConnection;
  ui: Ui;
}
