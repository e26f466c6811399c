// What a command-line tool is, for the cli and infra-server-ctl alike: a table of commands, each with its
// arguments, options and help text, the options every command takes, and how option values are read. Data and
// types only: parsing is in command-line.ts, help texts in help.ts.
import type { ParseArgsConfig } from 'node:util';
import { OUTPUT_FORMATS } from './terminal.js';

type ParseOptions = NonNullable<ParseArgsConfig['options']>;
/** An option as node:util parseArgs takes it, with its help line: `-s, --name ARG  help`. */
export type OptionSpec = ParseOptions[string] & { help: string; arg?: string };
export type Values = Record<string, string | boolean | Array<string | boolean> | undefined>;

export interface Command<Ctx> {
  /** The arguments as the usage line shows them, e.g. `COMMAND [NODE ...]`. */
  args: string;
  summary: string;
  options: Record<string, OptionSpec>;
  positionals: [min: number, max: number];
  /** Said instead of the generic message when the argument count is wrong. */
  countMessage?: string;
  /** Checks the arguments (a usage CommandError if wrong) and returns what runs once connected. */
  plan(args: string[], values: Values): (ctx: Ctx) => Promise<void>;
}

/**
 * A tool: its commands by name (words such as `job start`, or one word such as `org-create`), the options that
 * say how to connect, and what those options become. -F/--format and -h/--help are added to every tool.
 */
export interface Tool<Ctx, Conn> {
  name: string;
  /** The line above the command list of the tool's help. */
  heading: string;
  commands: Record<string, Command<Ctx>>;
  /** Options every command takes, before or after the command's words. */
  common: Record<string, OptionSpec>;
  /** How usage errors name a command: `cli job start`, or `user-create` alone as knife-style commands do. */
  label(name: string): string;
  /** The connection settings in the options given. */
  connection(values: Values): Conn;
}

const FORMAT_HELP_OPTIONS: Record<string, OptionSpec> = {
  format: {
    type: 'string',
    short: 'F',
    arg: 'FORMAT',
    help: `output format: ${OUTPUT_FORMATS.join(', ')} (default summary)`,
  },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

/** The options every command of `tool` takes, in help order. */
export function commonOptions(tool: Pick<Tool<unknown, unknown>, 'common'>): Record<string, OptionSpec> {
  return { ...tool.common, ...FORMAT_HELP_OPTIONS };
}

export const str = (v: Values, name: string): string | undefined => {
  const value = v[name];
  return typeof value === 'string' ? value : undefined;
};
export const flag = (v: Values, name: string): boolean => v[name] === true;
export const at = (args: readonly string[], i: number): string => args[i] ?? '';
