// push-jobs-server.rb: the server's settings, their defaults, and which file is read (spec 8).
import { readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism, hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { logFormats } from '../lib/log-levels.js';
import { logLevels, orgNamePattern, readSettings, readSettingsFile } from './settings-file.js';
import { ConfigError } from './config-error.js';

export const SERVER_CONFIG_FILE_NAME = 'push-jobs-server.rb';

const label = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const hostnamePattern = new RegExp(`^(?=.{1,253}$)${label}(\\.${label})*$`);
const isHost = (v: string): boolean => isIP(v) !== 0 || hostnamePattern.test(v);

/** `tcp://*`, `tcp://HOST` or `tcp://[IPv6]`: the ports come from their own settings. */
function isQueueAddress(v: string): boolean {
  if (!v.startsWith('tcp://')) return false;
  const host = v.slice('tcp://'.length);
  return host === '*' || isHost(host) || (/^\[.+\]$/.test(host) && isIP(host.slice(1, -1)) === 6);
}

/** An http(s) URL with a host and nothing past its path: where nodes reach the API, a prefix allowed. */
function isApiUrl(v: string): boolean {
  try {
    const url = new URL(v);
    const plain = url.search === '' && url.hash === '' && url.username === '' && url.password === '';
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && plain;
  } catch {
    return false;
  }
}

function isRedisUrl(v: string): boolean {
  if (/^rediss?\+sentinel:\/\/([^@/]*@)?[^/@]+(,[^/@]+)*\/[^/]+(\/\d+)?$/.test(v)) return true;
  try {
    const url = new URL(v);
    return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const port = (fallback: number) =>
  z.number().int().min(1).max(65535).describe('a port number from 1 to 65535').default(fallback);
const positive = (unit: string, fallback: number) =>
  z.number().int().positive().describe(`a whole number of ${unit} greater than 0`).default(fallback);

export const serverConfigSchema = z.strictObject({
  command_port: port(10002),
  heartbeat_interval: z.number().int().min(10).describe('a whole number of milliseconds, at least 10').default(1000),
  server_heartbeat_port: port(10000),
  server_name: z
    .string()
    .refine(isHost)
    .describe('a host name or IP address')
    .default(() => hostname()),
  queue_listen_address: z.string().refine(isQueueAddress).describe('an address like tcp://HOST').default('tcp://*'),
  api_port: port(10003),
  api_listen_address: z.string().refine(isHost).describe('a host name or IP address').default('0.0.0.0'),
  // Unset: http://server_name:api_port (see src/server.ts), which a balancer or a TLS proxy in front replaces.
  api_url: z.string().refine(isApiUrl).describe('an http(s) URL such as https://push.example.com').optional(),
  // Off unless set: the metrics listener is a port of its own, never the public API's.
  metrics_port: z.number().int().min(1).max(65535).describe('a port number from 1 to 65535').optional(),
  metrics_listen_address: z.string().refine(isHost).describe('a host name or IP address').default('127.0.0.1'),
  data_dir: z.string().min(1).describe('a directory path').default('.infra-data'),
  redis_url: z
    .string()
    .refine(isRedisUrl)
    .describe('a redis:// or rediss:// URL, or redis+sentinel://HOST:PORT[,HOST:PORT]/MASTER_NAME')
    .optional(),
  // Unset: 1 through Sentinel, else 0 (see src/store/redis-replication.ts).
  redis_min_replicas: z.int().min(0).max(16).describe('a whole number of replicas from 0 to 16').optional(),
  default_orgname: z
    .string()
    .regex(orgNamePattern)
    .describe('an organization name: 1 to 255 of a-z 0-9 _ -, starting with a letter or digit')
    .default('default'),
  auth_skew: positive('seconds', 900),
  signature_threads: z
    .number()
    .int()
    .min(0)
    .max(64)
    .describe('a whole number of threads from 0 to 64')
    .default(() => Math.min(4, Math.max(1, availableParallelism() - 1))),
  voting_timeout: positive('seconds', 60),
  max_body_size: positive('bytes', 65536),
  max_message_skew: positive('seconds', 300),
  offline_threshold: positive('heartbeat intervals', 3),
  online_threshold: positive('heartbeats', 2),
  curve_encryption: z.boolean().describe('true or false').default(true),
  session_key_lifetime: positive('seconds', 3600),
  store_timeout: z.number().positive().max(600).describe('a number of seconds greater than 0, at most 600').default(2),
  processes: z.int().min(1).max(64).describe('a whole number of processes from 1 to 64').default(1),
  lease_ttl: z.number().min(1).max(60).describe('a number of seconds from 1 to 60').default(5),
  job_retention_days: z.number().nonnegative().describe('a number of days, 0 to keep every job').default(30),
  schedule_catchup: z
    .number()
    .nonnegative()
    .describe('a number of seconds, 0 to fire no missed occurrence')
    .default(300),
  keep_alive_time: positive('seconds', 15),
  org_feed_expiration: positive('seconds', 60),
  max_json_depth: positive('levels', 100),
  max_name_length: positive('characters', 255),
  max_job_nodes: positive('nodes', 100_000),
  max_command_length: z.int().min(1).max(255).describe('a whole number of characters from 1 to 255').default(255),
  idle_timeout: positive('seconds', 60),
  header_timeout: positive('seconds', 20),
  request_timeout: positive('seconds', 60),
  handshake_timeout: positive('seconds', 5),
  max_event_streams: positive('event streams', 100),
  max_connections_per_address: positive('connections', 1000),
  // Unset: a tenth of the open-file limit the process has once started (see src/http/open-files.ts).
  node_connection_reserve: z.int().min(0).describe('a whole number of open files, 0 or more').optional(),
  ui_session_timeout: positive('seconds', 3600),
  log_level: z.enum(logLevels).describe('one of :debug, :info, :warn, :error').default('info'),
  log_format: z.enum(logFormats).describe('one of :text, :json').default('text'),
});

export type ServerConfig = z.output<typeof serverConfigSchema>;

/** The settings table of the README, in schema order. */
export const SERVER_SETTINGS_DOC: readonly { name: keyof ServerConfig; default: string; meaning: string }[] = [
  { name: 'command_port', default: '10002', meaning: 'ZeroMQ port on which nodes receive commands' },
  { name: 'heartbeat_interval', default: '1000', meaning: 'Heartbeat period, in milliseconds' },
  { name: 'server_heartbeat_port', default: '10000', meaning: 'ZeroMQ port receiving node heartbeats' },
  { name: 'server_name', default: 'host name', meaning: 'Host name that nodes connect to' },
  { name: 'queue_listen_address', default: 'tcp://*', meaning: 'Address the ZeroMQ sockets bind to' },
  { name: 'api_port', default: '10003', meaning: 'HTTP API port' },
  { name: 'api_listen_address', default: '0.0.0.0', meaning: 'Address the HTTP API binds to' },
  {
    name: 'api_url',
    default: 'http://server_name:api_port',
    meaning: 'URL nodes reach this server’s API at; config answers list every member’s',
  },
  { name: 'metrics_port', default: 'none', meaning: 'Port of GET /metrics (Prometheus); unset, nothing listens' },
  { name: 'metrics_listen_address', default: '127.0.0.1', meaning: 'Address the metrics port binds to' },
  { name: 'data_dir', default: '.infra-data', meaning: 'Folder for server data, relative to the working folder' },
  {
    name: 'redis_url',
    default: '$REDIS_URL',
    meaning: 'Redis, a Redis Cluster node or redis+sentinel:// URL; unset uses data_dir',
  },
  {
    name: 'redis_min_replicas',
    default: '1 with Sentinel, else 0',
    meaning: 'Redis replicas that must hold a write before it is answered (WAIT); fewer: 503',
  },
  {
    name: 'default_orgname',
    default: 'default',
    meaning: 'Organization created at first start, with its validator and the admin user',
  },
  { name: 'auth_skew', default: '900', meaning: 'Accepted clock skew of signed HTTP requests, in seconds' },
  {
    name: 'signature_threads',
    default: 'cores - 1, 1 to 4',
    meaning: 'Threads checking the signatures of API requests; 0: on the main thread',
  },
  { name: 'voting_timeout', default: '60', meaning: 'Seconds nodes have to accept a job' },
  { name: 'max_body_size', default: '65536', meaning: 'Largest ZeroMQ message body, in bytes' },
  { name: 'max_message_skew', default: '300', meaning: 'Accepted clock skew of ZeroMQ messages, in seconds' },
  { name: 'offline_threshold', default: '3', meaning: 'Missed heartbeat intervals before a node is offline' },
  { name: 'online_threshold', default: '2', meaning: 'Heartbeats before a node is online again' },
  { name: 'curve_encryption', default: 'true', meaning: 'Encrypt ZeroMQ traffic with CurveZMQ' },
  { name: 'session_key_lifetime', default: '3600', meaning: 'Seconds before a node must fetch a new config' },
  {
    name: 'store_timeout',
    default: '2',
    meaning: 'Seconds a store operation may take before writes are refused (503)',
  },
  {
    name: 'processes',
    default: '1',
    meaning: 'Server processes on this machine, sharing api_port (needs redis_url)',
  },
  {
    name: 'lease_ttl',
    default: '5',
    meaning: "Seconds a dead server's partitions wait before another takes them",
  },
  { name: 'job_retention_days', default: '30', meaning: 'Days a finished job and its output are kept; 0 keeps them' },
  {
    name: 'schedule_catchup',
    default: '300',
    meaning: 'Seconds late a missed schedule occurrence still fires, once',
  },
  { name: 'keep_alive_time', default: '15', meaning: 'Seconds a quiet event feed waits before a keepalive comment' },
  { name: 'org_feed_expiration', default: '60', meaning: "Seconds an organization's event feed keeps its events" },
  { name: 'max_json_depth', default: '100', meaning: 'Deepest nesting of arrays and objects in a request body' },
  { name: 'max_name_length', default: '255', meaning: 'Longest name of an object a request creates or renames' },
  { name: 'max_job_nodes', default: '100000', meaning: 'Most nodes one job may name' },
  { name: 'max_command_length', default: '255', meaning: 'Longest job command (the wire carries at most 255)' },
  {
    name: 'idle_timeout',
    default: '60',
    meaning: 'Seconds before a silent HTTP connection, or a vanished ZeroMQ peer, is closed',
  },
  {
    name: 'header_timeout',
    default: '20',
    meaning: "Seconds a client has to send a request's headers (408 past it)",
  },
  {
    name: 'request_timeout',
    default: '60',
    meaning: 'Seconds to send a whole request (408 past it); at least header_timeout',
  },
  {
    name: 'handshake_timeout',
    default: '5',
    meaning: 'Seconds a ZeroMQ peer has to finish its handshake before it is closed',
  },
  {
    name: 'max_event_streams',
    default: '100',
    meaning: 'Event streams one user or client may hold open (429 past it)',
  },
  {
    name: 'max_connections_per_address',
    default: '1000',
    meaning: 'HTTP connections one address may hold open on api_port (429 past it)',
  },
  {
    name: 'node_connection_reserve',
    default: 'a tenth of the open-file limit',
    meaning: 'Open files kept for node connections; HTTP connections past it get 503',
  },
  {
    name: 'ui_session_timeout',
    default: '3600',
    meaning: 'Seconds a web dashboard sign-in lasts without a request; then it signs in again',
  },
  { name: 'log_level', default: 'info', meaning: 'Least severe level logged: debug, info, warn or error' },
  { name: 'log_format', default: 'text', meaning: 'text: one line per event for people; json: one JSON object a line' },
];

export interface ServerConfigSource {
  /** `-c FILE`; relative to cwd. */
  file?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * `-c FILE` (it must exist), else `push-jobs-server.rb` in cwd if present, else the defaults. REDIS_URL applies
 * when the file does not set redis_url; data_dir comes back absolute. `file` is the file read, or null.
 */
export function loadServerConfig(opts: ServerConfigSource = {}): { config: ServerConfig; file: string | null } {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  const local = join(cwd, SERVER_CONFIG_FILE_NAME);
  const found = statSync(local, { throwIfNoEntry: false })?.isFile() === true ? local : null;
  const file = opts.file !== undefined ? resolve(cwd, opts.file) : found;
  const config =
    file === null
      ? readSettings('', SERVER_CONFIG_FILE_NAME, serverConfigSchema)
      : readSettingsFile(file, serverConfigSchema);
  const fromEnv = env.REDIS_URL;
  if (config.redis_url === undefined && fromEnv !== undefined && fromEnv !== '') {
    if (!isRedisUrl(fromEnv)) {
      const text = `expected a redis:// or rediss:// URL, got ${JSON.stringify(fromEnv)}`;
      throw new ConfigError('environment variable REDIS_URL', 0, 'redis_url', text);
    }
    config.redis_url = fromEnv;
  }
  if (config.header_timeout > config.request_timeout) {
    // Node refuses a headers timeout longer than the request's, which covers the headers too.
    const text = `header_timeout ${config.header_timeout} is longer than request_timeout ${config.request_timeout}`;
    throw new ConfigError(file ?? SERVER_CONFIG_FILE_NAME, lineOf(file, 'header_timeout'), 'header_timeout', text);
  }
  if (config.processes > 1 && config.redis_url === undefined) {
    // The embedded file store is written by one process: several need the store they can share.
    const text = `processes ${config.processes} needs redis_url: the embedded file store serves one process`;
    throw new ConfigError(file ?? SERVER_CONFIG_FILE_NAME, lineOf(file, 'processes'), 'processes', text);
  }
  return { config: { ...config, data_dir: resolve(cwd, config.data_dir) }, file };
}

/** The line that sets `name` in the file (1-based), or 0 when there is no file or no such line. */
function lineOf(file: string | null, name: string): number {
  if (file === null) return 0;
  const at = readFileSync(file, 'utf8')
    .split('\n')
    .findIndex((line) => new RegExp(`^\\s*${name}\\b`).test(line));
  return at + 1;
}
