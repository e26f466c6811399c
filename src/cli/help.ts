// The help texts of a tool built on framework.ts: its command list with the common options, one group of
// commands (`cli job`), and one command with its arguments and options.
import { type Command, commonOptions, type OptionSpec, type Tool } from './framework.js';

/** One aligned line per option: `-s, --name ARG  help`. */
export function optionLines(options: Record<string, OptionSpec>): string[] {
  const left = (n: string, o: OptionSpec) =>
    `${o.short === undefined ? '    ' : `-${o.short}, `}--${n}${o.arg === undefined ? '' : ` ${o.arg}`}`;
  const width = Math.max(...Object.entries(options).map(([n, o]) => left(n, o).length));
  return Object.entries(options).map(([n, o]) => `  ${left(n, o).padEnd(width)}  ${o.help}`);
}

function commandLines<Ctx, Conn>(tool: Tool<Ctx, Conn>, names: readonly string[]): string[] {
  const width = Math.max(...names.map((n) => n.length));
  return names.map((n) => `  ${n.padEnd(width)}  ${tool.commands[n]?.summary ?? ''}`);
}

export function mainHelp<Ctx, Conn>(tool: Tool<Ctx, Conn>): string {
  return [
    `Usage: ${tool.name} COMMAND [ARGUMENTS] [OPTIONS]`,
    '',
    tool.heading,
    ...commandLines(tool, Object.keys(tool.commands)),
    '',
    'Options, before or after the command:',
    ...optionLines(commonOptions(tool)),
    '',
    `Run ${tool.name} COMMAND --help for its arguments and options.`,
  ].join('\n');
}

/** The commands whose names start with the words of `group`, such as `node whitelist`. */
export function groupHelp<Ctx, Conn>(tool: Tool<Ctx, Conn>, group: string): string {
  const names = Object.keys(tool.commands).filter((n) => n.startsWith(`${group} `));
  return [
    `Usage: ${tool.name} ${group} SUBCOMMAND ...`,
    '',
    ...commandLines(tool, names),
    '',
    `Run ${tool.name} ${group} SUBCOMMAND --help for its arguments and options.`,
  ].join('\n');
}

export function commandHelp<Ctx, Conn>(tool: Tool<Ctx, Conn>, name: string, c: Command<Ctx>): string {
  return [
    `Usage: ${tool.name} ${name}${c.args === '' ? '' : ` ${c.args}`} [options]`,
    '',
    `${c.summary[0]?.toUpperCase() ?? ''}${c.summary.slice(1)}.`,
    '',
    ...optionLines({ ...c.options, ...commonOptions(tool) }),
  ].join('\n');
}
