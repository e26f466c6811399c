// The cli's commands (spec 4.4, 4.6, 2.6): their names, options and argument counts, the help text, and the
// parsing of a command line into a command to run. Pure: nothing here touches the network or the terminal.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Cli } from './cli-connection.js';
import { jobStart, type JobStartOptions, parseEnv, parsePollInterval, parseQuorum, parseSeconds } from './job-start.js';
import { jobAbort, jobList, jobOutput, jobStatus, OUTPUT_CHANNELS } from './jobs.js';
import { nodeStatus } from './nodes.js';
import { CommandError, EXIT, OUTPUT_FORMATS, parseFormat, type OutputFormat } from './output.js';
import { userChanges, userCreate, userDelete, userEdit, userList, userShow, type UserFields } from './users.js';
import { whitelistList, whitelistRemove, whitelistSet } from './whitelist.js';

type ParseOptions = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | Array<string | boolean> | undefined>;
type OptionSpec = ParseOptions[string] & { help: string; arg?: string };

export interface CliCommand {
  args: string;
  summary: string;
  options: Record<string, OptionSpec>;
  positionals: [min: number, max: number];
  /** Checks the arguments (a usage CommandError if wrong) and returns what runs once connected. */
  plan(args: string[], values: Values): (cli: Cli) => Promise<void>;
}

const str = (v: Values, name: string): string | undefined => {
  const value = v[name];
  return typeof value === 'string' ? value : undefined;
};
const flag = (v: Values, name: string): boolean => v[name] === true;
const at = (args: string[], i: number): string => args[i] ?? '';

const profile: Record<string, OptionSpec> = {
  email: { type: 'string', arg: 'ADDRESS', help: 'email address' },
  password: { type: 'string', arg: 'PASSWORD', help: 'password, at least 6 characters' },
  'display-name': { type: 'string', arg: 'NAME', help: 'display name (default: "FIRST LAST", else the user name)' },
  'first-name': { type: 'string', arg: 'NAME', help: 'first name' },
  'middle-name': { type: 'string', arg: 'NAME', help: 'middle name' },
  'last-name': { type: 'string', arg: 'NAME', help: 'last name' },
};

function profileOf(v: Values): UserFields {
  const fields: UserFields = {};
  const set = (field: keyof UserFields, option: string) => {
    const value = str(v, option);
    if (value !== undefined) fields[field] = value;
  };
  set('email', 'email');
  set('password', 'password');
  set('display_name', 'display-name');
  set('first_name', 'first-name');
  set('middle_name', 'middle-name');
  set('last_name', 'last-name');
  return fields;
}

function channelOf(v: Values): (typeof OUTPUT_CHANNELS)[number] {
  const value = str(v, 'channel') ?? 'stdout';
  const channel = OUTPUT_CHANNELS.find((c) => c === value);
  if (channel === undefined) throw CommandError.usage(`--channel: '${value}' is neither stdout nor stderr`);
  return channel;
}

const optional = <T>(value: string | undefined, parse: (text: string) => T): T | undefined =>
  value === undefined ? undefined : parse(value);

export const COMMANDS: Record<string, CliCommand> = {
  'job list': {
    args: '', summary: 'list the jobs of the organization, newest first', options: {}, positionals: [0, 0],
    plan: () => (cli) => jobList(cli),
  },
  'job start': {
    args: 'COMMAND [NODE ...]', summary: 'run COMMAND on nodes, wait for the job and report it',
    options: {
      timeout: { type: 'string', arg: 'SECONDS', help: 'seconds the command may run before the job times out (server default 3600)' },
      quorum: { type: 'string', short: 'q', arg: 'N|N%', help: 'nodes that must commit for the command to run (default 100%)' },
      search: { type: 'string', short: 's', arg: 'QUERY', help: 'also run on the nodes a node search finds' },
      capture: { type: 'boolean', help: 'keep the output of each node (see cli job output)' },
      env: { type: 'string', arg: 'JSON', help: 'environment of the command, a JSON object of strings' },
      'in-dir': { type: 'string', arg: 'DIR', help: 'working folder of the command on the nodes' },
      'as-user': { type: 'string', arg: 'USER', help: 'run the command as USER on the nodes' },
      file: { type: 'string', arg: 'FILE', help: 'send FILE to the nodes with the job' },
      'voting-timeout': { type: 'string', arg: 'SECONDS', help: 'seconds nodes have to commit (at most the server\'s setting)' },
      nowait: { type: 'boolean', short: 'b', help: 'print the job ID and return at once' },
      'poll-interval': { type: 'string', arg: 'SECONDS', help: 'seconds between status checks while waiting (default 1)' },
    },
    positionals: [1, Infinity],
    plan: (a, v) => {
      const o: JobStartOptions = {
        command: at(a, 0), nodes: a.slice(1), search: str(v, 'search'),
        timeout: optional(str(v, 'timeout'), (t) => parseSeconds('--timeout', t)),
        quorum: parseQuorum(str(v, 'quorum') ?? '100%'),
        votingTimeout: optional(str(v, 'voting-timeout'), (t) => parseSeconds('--voting-timeout', t)),
        capture: flag(v, 'capture'), env: optional(str(v, 'env'), parseEnv), dir: str(v, 'in-dir'), asUser: str(v, 'as-user'),
        file: str(v, 'file'), nowait: flag(v, 'nowait'), pollSeconds: parsePollInterval(str(v, 'poll-interval') ?? '1'),
      };
      return (cli) => jobStart(cli, o);
    },
  },
  'job status': {
    args: 'JOB_ID', summary: 'show a job: its command, status and the status of each node', options: {}, positionals: [1, 1],
    plan: (a) => (cli) => jobStatus(cli, { id: at(a, 0) }),
  },
  'job output': {
    args: 'JOB_ID NODE', summary: 'print the output a node captured for a job (started with --capture)',
    options: { channel: { type: 'string', arg: 'CHANNEL', help: 'stdout or stderr (default stdout)' } },
    positionals: [2, 2],
    plan: (a, v) => {
      const channel = channelOf(v);
      return (cli) => jobOutput(cli, { id: at(a, 0), node: at(a, 1), channel });
    },
  },
  'job abort': {
    args: 'JOB_ID', summary: 'stop a job that is voting or running', options: {}, positionals: [1, 1],
    plan: (a) => (cli) => jobAbort(cli, { id: at(a, 0) }),
  },
  'node status': {
    args: '[NODE ...]', summary: 'show whether nodes are up; an argument with ":" is a node search', options: {},
    positionals: [0, Infinity],
    plan: (a) => (cli) => nodeStatus(cli, { nodes: a }),
  },
  'node whitelist list': {
    args: 'NODE', summary: "list the commands a node's whitelist allows", options: {}, positionals: [1, 1],
    plan: (a) => (cli) => whitelistList(cli, { node: at(a, 0) }),
  },
  'node whitelist set': {
    args: 'NODE NAME COMMAND', summary: "add NAME to a node's whitelist, or change its command", options: {}, positionals: [3, 3],
    plan: (a) => (cli) => whitelistSet(cli, { node: at(a, 0), name: at(a, 1), command: at(a, 2) }),
  },
  'node whitelist remove': {
    args: 'NODE NAME', summary: "remove NAME from a node's whitelist", options: {}, positionals: [2, 2],
    plan: (a) => (cli) => whitelistRemove(cli, { node: at(a, 0), name: at(a, 1) }),
  },
  'user list': {
    args: '', summary: 'list user accounts (server-admins)',
    options: { 'with-uri': { type: 'boolean', short: 'w', help: 'show each URI' } }, positionals: [0, 0],
    plan: (_a, v) => (cli) => userList(cli, { withUri: flag(v, 'with-uri') }),
  },
  'user show': {
    args: 'USER', summary: 'show a user account', options: {}, positionals: [1, 1],
    plan: (a) => (cli) => userShow(cli, { name: at(a, 0) }),
  },
  'user create': {
    args: 'USER --email ADDRESS --password PASSWORD', summary: 'create a user account and print its private key',
    options: { ...profile, file: { type: 'string', short: 'f', arg: 'FILE', help: 'write the private key to FILE instead of stdout' } },
    positionals: [1, 1],
    plan: (a, v) => {
      const { email, password, ...fields } = profileOf(v);
      if (email === undefined) throw CommandError.usage('user create needs --email ADDRESS');
      if (password === undefined) throw CommandError.usage('user create needs --password PASSWORD');
      return (cli) => userCreate(cli, { name: at(a, 0), fields: { ...fields, email, password }, file: str(v, 'file') });
    },
  },
  'user edit': {
    args: 'USER', summary: 'change fields of a user account',
    options: { ...profile, 'new-name': { type: 'string', arg: 'NAME', help: 'rename the account' } }, positionals: [1, 1],
    plan: (a, v) => {
      const changes = userChanges(profileOf(v), str(v, 'new-name'));
      return (cli) => userEdit(cli, { name: at(a, 0), changes });
    },
  },
  'user delete': {
    args: 'USER', summary: 'delete a user account',
    options: { yes: { type: 'boolean', short: 'y', help: 'do not ask for confirmation' } }, positionals: [1, 1],
    plan: (a, v) => (cli) => userDelete(cli, { name: at(a, 0), yes: flag(v, 'yes') }),
  },
};

export const COMMON_OPTIONS: Record<string, OptionSpec> = {
  config: { type: 'string', short: 'c', arg: 'FILE', help: 'config.rb to use (default: .infra/config.rb here or above, else ~/.infra/config.rb)' },
  'server-url': { type: 'string', arg: 'URL', help: 'server URL, https://HOST/organizations/ORG (overrides server_url)' },
  user: { type: 'string', short: 'u', arg: 'NAME', help: 'user to sign requests as (overrides node_name)' },
  key: { type: 'string', short: 'k', arg: 'FILE', help: "the user's private key (overrides client_key)" },
  format: { type: 'string', short: 'F', arg: 'FORMAT', help: `output format: ${OUTPUT_FORMATS.join(', ')} (default summary)` },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

export function mainHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  return [
    'Usage: cli COMMAND [ARGUMENTS] [OPTIONS]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Run cli COMMAND --help for its arguments and options.',
  ].join('\n');
}

export function commandHelp(name: string, c: CliCommand): string {
  const options = { ...c.options, ...COMMON_OPTIONS };
  const left = (n: string, o: OptionSpec) => `${o.short === undefined ? '    ' : `-${o.short}, `}--${n}${o.arg === undefined ? '' : ` ${o.arg}`}`;
  const width = Math.max(...Object.entries(options).map(([n, o]) => left(n, o).length));
  return [
    `Usage: cli ${name}${c.args === '' ? '' : ` ${c.args}`} [options]`,
    '',
    `${c.summary[0]?.toUpperCase() ?? ''}${c.summary.slice(1)}.`,
    '',
    ...Object.entries(options).map(([n, o]) => `  ${left(n, o).padEnd(width)}  ${o.help}`),
  ].join('\n');
}

function groupHelp(group: string): string {
  const names = Object.keys(COMMANDS).filter((n) => n.startsWith(`${group} `));
  const width = Math.max(...names.map((n) => n.length));
  return [`Usage: cli ${group} SUBCOMMAND ...`, '', ...names.map((n) => `  ${n.padEnd(width)}  ${COMMANDS[n]?.summary ?? ''}`)].join('\n');
}

export interface Connection {
  config?: string;
  serverUrl?: string;
  user?: string;
  key?: string;
}

export type CommandLine =
  | { kind: 'help'; text: string }
  | { kind: 'usage'; message: string | null; text: string }
  | { kind: 'run'; name: string; run: (cli: Cli) => Promise<void>; format: OutputFormat; connection: Connection };

/** Common options may come before the command (`cli -c FILE job list`): how many leading tokens they take. */
function leadingOptions(argv: readonly string[]): number {
  for (let i = 0; ;) {
    const token = argv[i];
    if (token === undefined) return i;
    const long = /^--([^=]+)(=?)/.exec(token);
    const short = long === null ? /^-([A-Za-z])(.*)$/.exec(token) : null;
    const spec = long !== null
      ? COMMON_OPTIONS[long[1] ?? '']
      : short !== null ? Object.values(COMMON_OPTIONS).find((o) => o.short === short[1]) : undefined;
    if (spec === undefined) return i;
    const inline = long !== null ? long[2] === '=' : short?.[2] !== '';
    i += spec.type === 'string' && !inline ? 2 : 1;
  }
}

/** The longest run of leading words (up to 2) that some command names start with. */
function groupOf(words: readonly string[]): string | undefined {
  return [words.slice(0, 2).join(' '), words[0] ?? ''].find((g) => g !== '' && Object.keys(COMMANDS).some((n) => n.startsWith(`${g} `)));
}

export function parseCommandLine(argv: readonly string[]): CommandLine {
  const lead = leadingOptions(argv);
  const leading = argv.slice(0, lead);
  const rest = argv.slice(lead);
  // `user-list` is spec 4.6's spelling of `user list`.
  const first = rest[0] ?? '';
  const words = first.includes('-') && !first.startsWith('-') ? [...first.split('-'), ...rest.slice(1)] : [...rest];
  if (words[0] === 'help' || (words.length === 0 && leading.some((t) => t === '-h' || t === '--help'))) {
    return { kind: 'help', text: mainHelp() };
  }
  if (words.length === 0) return { kind: 'usage', message: null, text: mainHelp() };
  const name = [3, 2, 1].map((n) => words.slice(0, n).join(' ')).find((n) => COMMANDS[n] !== undefined);
  const command = name === undefined ? undefined : COMMANDS[name];
  if (name === undefined || command === undefined) {
    const group = groupOf(words);
    if (group === undefined) return { kind: 'usage', message: `unknown command '${words[0] ?? ''}'; run cli --help for the list`, text: mainHelp() };
    const next = words[group.split(' ').length];
    if (next === '-h' || next === '--help') return { kind: 'help', text: groupHelp(group) };
    return { kind: 'usage', message: next === undefined ? null : `unknown command '${group} ${next}'`, text: groupHelp(group) };
  }
  const usage = (message: string): CommandLine => ({ kind: 'usage', message, text: commandHelp(name, command) });
  let parsed;
  try {
    const options: ParseOptions = Object.fromEntries(
      Object.entries({ ...command.options, ...COMMON_OPTIONS }).map(([n, { help: _help, arg: _arg, ...spec }]) => [n, spec]),
    );
    parsed = parseArgs({ args: [...leading, ...words.slice(name.split(' ').length)], options, allowPositionals: true, strict: true });
  } catch (e) {
    return usage(e instanceof Error ? e.message : String(e));
  }
  const values: Values = parsed.values;
  if (flag(values, 'help')) return { kind: 'help', text: commandHelp(name, command) };
  const [min, max] = command.positionals;
  const count = parsed.positionals.length;
  if (count < min || count > max) {
    const wanted = max === Infinity ? `at least ${min}` : min === max ? `${min}` : `${min} to ${max}`;
    const plural = (max === Infinity ? min : max) === 1 ? '' : 's';
    return usage(`cli ${name} takes ${wanted} argument${plural}, got ${count}`);
  }
  const formatName = str(values, 'format') ?? 'summary';
  const outputFormat = parseFormat(formatName);
  if (outputFormat === undefined) return usage(`unknown format '${formatName}': use one of ${OUTPUT_FORMATS.join(', ')}`);
  const connection: Connection = {};
  for (const [field, option] of [['config', 'config'], ['serverUrl', 'server-url'], ['user', 'user'], ['key', 'key']] as const) {
    const value = str(values, option);
    if (value !== undefined) connection[field] = value;
  }
  try {
    return { kind: 'run', name, run: command.plan(parsed.positionals, values), format: outputFormat, connection };
  } catch (e) {
    if (e instanceof CommandError && e.exitCode === EXIT.usage) return usage(e.message);
    throw e;
  }
}
