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

const ONE_OR_MORE = 'expected an http(s) URL ending in /organizations/ORG, or an array of such URLs';

/**
 * client.rb's server_url: one organization URL, or an array of them (members of one cluster, tried in turn); all
 * must name the same organization, since the node belongs to one. Read as the list, in its order, each URL once.
 */
export const serverUrlsSchema = z.unknown().transform((value, ctx): string[] => {
  const urls = typeof value === 'string' ? [value] : Array.isArray(value) ? value : undefined;
  if (urls === undefined || urls.length === 0 || !urls.every((u) => typeof u === 'string')) {
    ctx.addIssue({ code: 'custom', message: urls?.length === 0 ? `${ONE_OR_MORE}, not an empty one` : ONE_OR_MORE });
    return z.NEVER;
  }
  const split = urls.map((u) => ({ url: u, parts: splitServerUrl(u) }));
  const bad = split.find((s) => s.parts === null);
  if (bad !== undefined) {
    const message =
      typeof value === 'string'
        ? 'expected an http(s) URL ending in /organizations/ORG'
        : `expected an array of http(s) URLs ending in /organizations/ORG (${JSON.stringify(bad.url)} is not one)`;
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  }
  const orgs = [...new Set(split.map((s) => s.parts?.org))];
  if (orgs.length > 1) {
    ctx.addIssue({
      code: 'custom',
      message: `expected URLs that all name one organization (these name ${orgs.join(' and ')})`,
    });
    return z.NEVER;
  }
  return [...new Set(urls)];
});

// Regular client.rb files may use the regular client's other levels; each maps to the nearest of ours.
const clientLogLevelSchema = z
  .enum([...logLevels, 'trace', 'fatal', 'auto'])
  .transform((v): LogLevel => (v === 'trace' ? 'debug' : v === 'fatal' ? 'error' : v === 'auto' ? 'info' : v))
  .describe('one of :debug, :info, :warn, :error');

export const clientConfigSchema = z.object({
  /** Absent when -S gives it. */
  server_url: serverUrlsSchema.optional(),
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

/**
 * Reads client.rb; chef_server_url is another name for server_url. The regular client's settings are skipped
 * quietly; any other unknown setting is skipped with a warning in `warnings`, naming the setting it most
 * resembles, since `node_nam "web1"` ignored without a word leaves a node running under the wrong name.
 */
export function loadClientConfig(file: string, warnings: string[] = []): ClientConfig {
  return readSettingsFile(file, clientConfigSchema, {
    strict: false,
    aliases: { chef_server_url: 'server_url' },
    skipped: (name, line) => {
      if (CHEF_CLIENT_SETTINGS.has(name)) return;
      const near = nearest(name, [...Object.keys(clientConfigSchema.shape), 'chef_server_url']);
      warnings.push(`${file}:${line}: unknown setting ${name} ignored${near ? ` (did you mean ${near}?)` : ''}`);
    },
  });
}

/** Settings of the regular chef-client that a shared client.rb may hold. */
const CHEF_CLIENT_SETTINGS = new Set([
  'cache_path',
  'chef_license',
  'chef_repo_path',
  'client_fork',
  'encrypted_data_bag_secret',
  'environment',
  'file_backup_path',
  'file_cache_path',
  'http_proxy',
  'https_proxy',
  'interval',
  'json_attribs',
  'local_mode',
  'lockfile',
  'no_proxy',
  'ohai',
  'pid_file',
  'policy_group',
  'policy_name',
  'rest_timeout',
  'splay',
  'ssl_ca_file',
  'ssl_verify_mode',
  'trusted_certs_dir',
  'verbose_logging',
  'verify_api_cert',
]);

/** The known name within two edits of `name`, if any. */
function nearest(name: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const k of known) {
    const distance = editDistance(name, k);
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name: k, distance };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}
