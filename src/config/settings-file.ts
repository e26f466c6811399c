// Reads and validates `setting value` files (push-jobs-server.rb, client.rb, config.rb) against a zod schema per file.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { codeOf } from '../lib/thrown.js';
import { ConfigError } from './config-error.js';
import { parseSettings, type SettingValue } from './ruby-literals.js';

export interface ReadOptions {
  /** false: settings the schema does not know are skipped (client.rb carries the regular client's settings too). */
  strict?: boolean;
  /** With `strict: false`, told of each setting skipped. */
  skipped?: (name: string, line: number) => void;
  /** Other names for a setting, e.g. `{ chef_server_url: 'server_url' }`. */
  aliases?: Record<string, string>;
}

// Shared by the three files: org names (reference: infra-server-original 407) and the logger's levels.
export const orgNamePattern = /^[a-z0-9][a-z0-9_-]{0,254}$/;
export { logLevels, type LogLevel } from '../lib/log-levels.js';

/**
 * Parses `text` and validates it with `schema`, applying its defaults. A field's `.describe()` text says what
 * it expects, and errors read `FILE:LINE: setting: expected DESCRIPTION, got VALUE`.
 */
export function readSettings<S extends z.ZodObject>(
  text: string,
  file: string,
  schema: S,
  options: ReadOptions = {},
): z.output<S> {
  const shape: Record<string, z.core.$ZodType> = schema.shape;
  const aliases = options.aliases ?? {};
  const seen = new Map<string, { line: number; written: string }>();
  const input: Record<string, SettingValue> = {};
  for (const { name, value, line } of parseSettings(text, file)) {
    const key = Object.hasOwn(aliases, name) ? (aliases[name] ?? name) : name;
    if (!Object.hasOwn(shape, key)) {
      if (options.strict === false) {
        options.skipped?.(name, line);
        continue;
      }
      throw new ConfigError(file, line, name, `unknown setting ${name}`);
    }
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      const same = earlier.written === name ? '' : ` as ${earlier.written}`;
      throw new ConfigError(file, line, name, `${name} is already set${same} on line ${earlier.line}`);
    }
    seen.set(key, { line, written: name });
    input[key] = value;
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  // The earliest line first, so fixing top-down works; a missing setting (no line) comes last.
  const lineOf = (issue: z.core.$ZodIssue): number => seen.get(String(issue.path[0]))?.line ?? Infinity;
  const issue = [...result.error.issues].sort((a, b) => lineOf(a) - lineOf(b))[0];
  const key = String(issue?.path[0] ?? '');
  const expected = expectation(shape[key]);
  const why = expected === undefined ? (issue?.message ?? 'invalid value') : `expected ${expected}`;
  const where = seen.get(key);
  if (where === undefined) throw new ConfigError(file, 0, key || undefined, key ? `missing ${key}: ${why}` : why);
  throw new ConfigError(file, where.line, where.written, `${where.written}: ${why}, got ${show(input[key] ?? null)}`);
}

/** Reads and validates a settings file; a file that cannot be read is a ConfigError naming it. */
export function readSettingsFile<S extends z.ZodObject>(
  file: string,
  schema: S,
  options: ReadOptions = {},
): z.output<S> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = String(codeOf(err) ?? err);
    throw new ConfigError(file, 0, undefined, code === 'ENOENT' ? 'no such file' : `cannot read the file (${code})`, {
      cause: err,
    });
  }
  return readSettings(text, file, schema, options);
}

function expectation(field: z.core.$ZodType | undefined): string | undefined {
  for (let s = field; s !== undefined;) {
    const description = z.globalRegistry.get(s)?.description;
    if (description !== undefined) return description;
    const def = s._zod.def;
    s = 'innerType' in def && def.innerType instanceof z.core.$ZodType ? def.innerType : undefined;
  }
  return undefined;
}

/** A value as it would be written in the file, shortened. */
function show(value: SettingValue): string {
  const text = render(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function render(value: SettingValue): string {
  if (value === null) return 'nil';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return `[${value.map(render).join(', ')}]`;
  const entries = Object.entries(value);
  if (entries.length === 1 && (value.constant === 'STDOUT' || value.constant === 'STDERR')) return value.constant;
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)} => ${render(v)}`).join(', ')}}`;
}
