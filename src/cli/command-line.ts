// A command line read against a tool's table (framework.ts), and run: which command it names, its arguments and
// options, the help asked for at any level, and the usage errors a user sees before anything is sent. Common
// options may come before or after the command's words.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { messageOf } from '../lib/thrown.js';
import { type Command, commonOptions, flag, type OptionSpec, str, type Tool, type Values } from './framework.js';
import { commandHelp, groupHelp, mainHelp } from './help.js';
import {
  CommandError,
  EXIT,
  OUTPUT_FORMATS,
  type OutputFormat,
  parseFormat,
  runCommand,
  Ui,
  type UiStreams,
} from './terminal.js';

/** Help goes to stdout; a usage error goes to stderr, its message (if any) above the usage text. */
type Shown = { kind: 'help'; text: string } | { kind: 'usage'; message: string | null; text: string };

export type CommandLine<Ctx, Conn> =
  Shown | { kind: 'run'; name: string; run: (ctx: Ctx) => Promise<void>; format: OutputFormat; connection: Conn };

const help = (text: string): Shown => ({ kind: 'help', text });
const usage = (message: string | null, text: string): Shown => ({ kind: 'usage', message, text });

/** The options of `args` read strictly against `options`; an unknown option or a missing value throws. */
export function parseOptions(
  options: Record<string, OptionSpec>,
  args: readonly string[],
): { values: Values; positionals: string[] } {
  const specs: NonNullable<ParseArgsConfig['options']> = Object.fromEntries(
    Object.entries(options).map(([n, { help: _help, arg: _arg, ...spec }]) => [n, spec]),
  );
  const parsed = parseArgs({ args: [...args], options: specs, allowPositionals: true, strict: true });
  return { values: parsed.values, positionals: parsed.positionals };
}

/** The option a token starts, and whether its value is in the token too (`--config=FILE`, `-cFILE`). */
function optionAt(
  options: Record<string, OptionSpec>,
  token: string,
): { spec: OptionSpec; inline: boolean } | undefined {
  const long = /^--([^=]+)(=?)/.exec(token);
  if (long !== null) {
    const name = long[1] ?? '';
    const spec = Object.hasOwn(options, name) ? options[name] : undefined;
    return spec === undefined ? undefined : { spec, inline: long[2] === '=' };
  }
  const short = /^-([A-Za-z])(.*)$/.exec(token);
  if (short === null) return undefined;
  const spec = Object.values(options).find((o) => o.short === short[1]);
  return spec === undefined ? undefined : { spec, inline: short[2] !== '' };
}

/** How many leading tokens are common options (`cli -c FILE job list`); the first other token ends them. */
function leadingOptions(options: Record<string, OptionSpec>, argv: readonly string[]): number {
  let i = 0;
  for (let token = argv[i]; token !== undefined; token = argv[i]) {
    const option = optionAt(options, token);
    if (option === undefined) break;
    i += option.spec.type === 'string' && !option.inline ? 2 : 1;
  }
  return i;
}

/** The words that may name a command: `user-list` is spec 4.6's spelling of `user list`, unless a command has that name. */
function wordsOf(commands: Record<string, unknown>, rest: readonly string[]): string[] {
  const first = rest[0] ?? '';
  if (Object.hasOwn(commands, first) || first.startsWith('-') || !first.includes('-')) return [...rest];
  return [...first.split('-'), ...rest.slice(1)];
}

/** The longest run of leading words that names a command, or (`group`) that command names start with. */
function longestName(commands: Record<string, unknown>, words: readonly string[], group: boolean): string | undefined {
  const names = Object.keys(commands);
  const most = Math.max(...names.map((n) => n.split(' ').length)) - (group ? 1 : 0);
  for (let n = Math.min(most, words.length); n > 0; n--) {
    const candidate = words.slice(0, n).join(' ');
    if (group ? names.some((name) => name.startsWith(`${candidate} `)) : Object.hasOwn(commands, candidate)) {
      return candidate;
    }
  }
  return undefined;
}

/** Only options where a command was wanted: the help they ask for, else a usage error showing `text`. */
function withoutCommand(options: Record<string, OptionSpec>, args: readonly string[], text: string): Shown {
  try {
    return flag(parseOptions(options, args).values, 'help') ? help(text) : usage(null, text);
  } catch (e) {
    return usage(messageOf(e), text);
  }
}

/** Words that name no command: a group of commands (`cli job`) shows its list, anything else the tool's. */
function noCommand<Ctx, Conn>(tool: Tool<Ctx, Conn>, leading: string[], rest: string[], words: string[]): Shown {
  const common = commonOptions(tool);
  const group = longestName(tool.commands, words, true);
  if (group === undefined) {
    const token = rest[0] ?? '';
    const message = token.startsWith('-')
      ? `unknown option '${token}'; run ${tool.name} --help for the options every command takes`
      : `unknown command '${token}'; run ${tool.name} --help for the list`;
    return usage(message, mainHelp(tool));
  }
  const text = groupHelp(tool, group);
  const after = words.slice(group.split(' ').length);
  const next = after[0];
  if (next !== undefined && !next.startsWith('-')) return usage(`unknown command '${group} ${next}'`, text);
  return withoutCommand(common, [...leading, ...after], text);
}

function commandLine<Ctx, Conn>(
  tool: Tool<Ctx, Conn>,
  name: string,
  command: Command<Ctx>,
  args: readonly string[],
): CommandLine<Ctx, Conn> {
  const text = commandHelp(tool, name, command);
  let parsed;
  try {
    parsed = parseOptions({ ...command.options, ...commonOptions(tool) }, args);
  } catch (e) {
    return usage(messageOf(e), text);
  }
  const { values, positionals } = parsed;
  if (flag(values, 'help')) return help(text);
  const [min, max] = command.positionals;
  const count = positionals.length;
  if (count < min || count > max) {
    const wanted = max === Infinity ? `at least ${min}` : min === max ? `${min}` : `${min} to ${max}`;
    const plural = (max === Infinity ? min : max) === 1 ? '' : 's';
    return usage(command.countMessage ?? `${tool.label(name)} takes ${wanted} argument${plural}, got ${count}`, text);
  }
  const formatName = str(values, 'format') ?? 'summary';
  const format = parseFormat(formatName);
  if (format === undefined)
    return usage(`unknown format '${formatName}': use one of ${OUTPUT_FORMATS.join(', ')}`, text);
  try {
    return { kind: 'run', name, run: command.plan(positionals, values), format, connection: tool.connection(values) };
  } catch (e) {
    if (e instanceof CommandError && e.exitCode === EXIT.usage) return usage(e.message, text);
    throw e;
  }
}

export function parseCommandLine<Ctx, Conn>(tool: Tool<Ctx, Conn>, argv: readonly string[]): CommandLine<Ctx, Conn> {
  const lead = leadingOptions(commonOptions(tool), argv);
  const leading = argv.slice(0, lead);
  const rest = argv.slice(lead);
  const words = wordsOf(tool.commands, rest);
  if (words[0] === 'help') {
    // `help COMMAND` is `COMMAND --help`.
    return words.length === 1
      ? help(mainHelp(tool))
      : parseCommandLine(tool, [...leading, ...words.slice(1), '--help']);
  }
  if (words.length === 0) return withoutCommand(commonOptions(tool), leading, mainHelp(tool));
  const name = longestName(tool.commands, words, false);
  const command = name === undefined ? undefined : tool.commands[name];
  if (name === undefined || command === undefined) return noCommand(tool, leading, rest, words);
  return commandLine(tool, name, command, [...leading, ...words.slice(name.split(' ').length)]);
}

/**
 * Runs one command line: help on stdout (exit 0), a usage error on stderr (exit 2), else the command with what
 * `connect` makes of the connection options.
 */
export async function runTool<Ctx, Conn>(
  tool: Tool<Ctx, Conn>,
  argv: readonly string[],
  io: UiStreams,
  connect: (connection: Conn, ui: Ui) => Promise<Ctx>,
): Promise<number> {
  const line = parseCommandLine(tool, argv);
  if (line.kind === 'help') {
    io.stdout.write(`${line.text}\n`);
    return EXIT.ok;
  }
  if (line.kind === 'usage') {
    if (line.message !== null) io.stderr.write(`ERROR: ${line.message}\n`);
    io.stderr.write(`${line.text}\n`);
    return EXIT.usage;
  }
  const ui = new Ui(io, line.format);
  return runCommand(ui, async () => line.run(await connect(line.connection, ui)));
}
