// client.rb as push-jobs-client reads it: server, identity, whitelist and logging (spec 4.5, reference 7.2).
import { hostname } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { logLevels, orgNamePattern, readSettingsFile, type LogLevel } from './settings-file.js';

const configDir = process.platform === 'win32' ? 'C:\\infra' : '/etc/infra';
export const DEFAULT_CLIENT_CONFIG_FILE = join(configDir, 'client.rb');

/** A plain http(s) URL: no query, fragment or credentials; null for anything else. */
export function parseHttpUrl(url: string): URL | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') return null;
  return parsed;
}

/** Splits `https://host[/prefix]/organizations/ORG` into the base URL and the org; null for any other URL. */
export function splitServerUrl(url: string): { baseUrl: string; org: string } | null {
  const parsed = parseHttpUrl(url);
  if (parsed === null) return null;
  const m = /^(.*)\/organizations\/([^/]+)\/?$/.exec(parsed.pathname);
  const [, prefix = '', org = ''] = m ?? [];
  return m !== null && orgNamePattern.test(org) ? { baseUrl: parsed.origin + prefix, org } : null;
}

/** Shared with config.rb: the org name is read from the URL (reference 7.1). */
export const serverUrlSchema = z
  .string()
  .refine((v) => splitServerUrl(v) !== null)
  .describe('an http(s) URL ending in /organizations/ORG');

/** Client and node names (reference: infra-server-original, client name rule). */
export const principalNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]+$/)
  .describe('a name of letters, digits, ".", "_" and "-"');

const pathSchema = z.string().min(1).describe('a file path');

// Regular client.rb files may use the regular client's other levels; each maps to the nearest of ours.
const clientLogLevelSchema = z
  .enum([...logLevels, 'trace', 'fatal', 'auto'])
  .transform((v): LogLevel => (v === 'trace' ? 'debug' : v === 'fatal' ? 'error' : v === 'auto' ? 'info' : v))
  .describe('one of :debug, :info, :warn, :error');

export const clientConfigSchema = z.object({
  /** Absent when -S gives it. */
  server_url: serverUrlSchema.optional(),
  node_name: principalNameSchema.default(() => hostname()),
  client_key: pathSchema.default(join(configDir, 'client.pem')),
  validation_client_name: principalNameSchema.optional(),
  validation_key: pathSchema.default(join(configDir, 'validation.pem')),
  whitelist: z
    .record(z.string().min(1), z.string().min(1))
    .describe('a hash of job name => command string')
    .default(() => ({})),
  log_level: clientLogLevelSchema.default('info'),
  log_location: z
    .union([z.string().min(1), z.strictObject({ constant: z.enum(['STDOUT', 'STDERR']) })])
    .describe('a file path, STDOUT or STDERR')
    .default(() => ({ constant: 'STDOUT' as const })),
  file_dir: pathSchema.default('/tmp/push-jobs'),
  allow_unencrypted: z.boolean().describe('true or false').default(false),
});

export type ClientConfig = z.output<typeof clientConfigSchema>;

/** Reads client.rb, skipping the regular client's settings; chef_server_url is another name for server_url. */
export function loadClientConfig(file: string): ClientConfig {
  return readSettingsFile(file, clientConfigSchema, { strict: false, aliases: { chef_server_url: 'server_url' } });
}
