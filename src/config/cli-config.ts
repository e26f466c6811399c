// config.rb for the cli: which file is used, and the server, user and key it names (spec 4.4).
import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { principalNameSchema, serverUrlSchema } from './client-config.js';
import { readSettingsFile } from './settings-file.js';

export const cliConfigSchema = z.object({
  server_url: serverUrlSchema.optional(),
  node_name: principalNameSchema.optional(),
  client_key: z.string().min(1).describe('a file path').optional(),
});

export type CliConfig = z.output<typeof cliConfigSchema>;

const isFile = (path: string): boolean => statSync(path, { throwIfNoEntry: false })?.isFile() === true;

/** `-c FILE`, else `.infra/config.rb` in cwd or the nearest parent holding one, else `~/.infra/config.rb`. */
export function findCliConfig(opts: { explicit?: string; cwd: string; home: string }): string | null {
  if (opts.explicit !== undefined) return resolve(opts.cwd, opts.explicit);
  for (let dir = resolve(opts.cwd); ; dir = dirname(dir)) {
    const candidate = join(dir, '.infra', 'config.rb');
    if (isFile(candidate)) return candidate;
    if (dirname(dir) === dir) break;
  }
  const inHome = join(opts.home, '.infra', 'config.rb');
  return isFile(inHome) ? inHome : null;
}

/** Unknown settings are skipped; a relative client_key is taken from the config file's folder. */
export function loadCliConfig(file: string): CliConfig {
  const config = readSettingsFile(file, cliConfigSchema, { strict: false, aliases: { chef_server_url: 'server_url' } });
  const key = config.client_key;
  return key === undefined ? config : { ...config, client_key: resolve(dirname(file), key) };
}
