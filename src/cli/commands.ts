// The cli's commands (spec 4.4, 4.6, 2.6) as a table for the command framework: their names, arguments, options
// and help text, the options that say where to connect, and what each command runs once connected.
import type { Cli, CliTargetOptions } from './cli-connection.js';
import { at, type Command, flag, type OptionSpec, str, type Tool, type Values } from './framework.js';
import { JOB_BODY_OPTIONS, jobBodyOptionsOf } from './job-options.js';
import { jobStart, watchJob, type JobStartOptions, parsePollInterval } from './job-start.js';
import { jobAbort, jobList, jobOutput, jobStatus, OUTPUT_CHANNELS } from './jobs.js';
import { nodeStatus } from './nodes.js';
import { SCHEDULE_ADD_OPTIONS, scheduleAddOptionsOf } from './schedule-options.js';
import { scheduleAdd, scheduleChange, type ScheduleChange, scheduleList, scheduleShow } from './schedules.js';
import { CommandError } from './terminal.js';
import { userChanges, userCreate, userDelete, userEdit, userList, userShow, type UserFields } from './users.js';
import { whitelistList, whitelistRemove, whitelistSet } from './whitelist-commands.js';

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

const POLL_INTERVAL: OptionSpec = {
  type: 'string',
  arg: 'SECONDS',
  help: 'seconds between status checks when the server offers no live feed (default 1)',
};
const VERBOSE: OptionSpec = { type: 'boolean', short: 'V', help: 'print a line for every node event' };

/** `schedule delete|pause|resume NAME`. */
const scheduleChangeCommand = (change: ScheduleChange, summary: string): Command<Cli> => ({
  args: 'NAME',
  summary,
  options: {},
  positionals: [1, 1],
  plan: (a) => (cli) => scheduleChange(cli, { name: at(a, 0), change }),
});

const COMMANDS: Record<string, Command<Cli>> = {
  'job list': {
    args: '',
    summary: 'list the jobs of the organization, newest first',
    options: {},
    positionals: [0, 0],
    plan: () => (cli) => jobList(cli),
  },
  'job start': {
    args: 'COMMAND [NODE ...]',
    summary: 'run COMMAND on nodes, wait for the job and report it',
    options: {
      ...JOB_BODY_OPTIONS,
      nowait: { type: 'boolean', short: 'b', help: 'print the job ID and return at once' },
      'poll-interval': POLL_INTERVAL,
      verbose: VERBOSE,
    },
    positionals: [1, Infinity],
    plan: (a, v) => {
      const o: JobStartOptions = {
        ...jobBodyOptionsOf(at(a, 0), a.slice(1), v),
        nowait: flag(v, 'nowait'),
        pollSeconds: parsePollInterval(str(v, 'poll-interval') ?? '1'),
        verbose: flag(v, 'verbose'),
      };
      return (cli) => jobStart(cli, o);
    },
  },
  'job watch': {
    args: 'JOB_ID',
    summary: "follow a job's progress live until it finishes, then report it",
    options: { 'poll-interval': POLL_INTERVAL, verbose: VERBOSE },
    positionals: [1, 1],
    plan: (a, v) => {
      const o = { pollSeconds: parsePollInterval(str(v, 'poll-interval') ?? '1'), verbose: flag(v, 'verbose') };
      return (cli) => watchJob(cli, at(a, 0), o);
    },
  },
  'job status': {
    args: 'JOB_ID',
    summary: 'show a job: its command, status and the status of each node',
    options: {},
    positionals: [1, 1],
    plan: (a) => (cli) => jobStatus(cli, { id: at(a, 0) }),
  },
  'job output': {
    args: 'JOB_ID NODE',
    summary: 'print the output a node captured for a job (started with --capture)',
    options: { channel: { type: 'string', arg: 'CHANNEL', help: 'stdout or stderr (default stdout)' } },
    positionals: [2, 2],
    plan: (a, v) => {
      const channel = channelOf(v);
      return (cli) => jobOutput(cli, { id: at(a, 0), node: at(a, 1), channel });
    },
  },
  'job abort': {
    args: 'JOB_ID',
    summary: 'stop a job that is voting or running',
    options: {},
    positionals: [1, 1],
    plan: (a) => (cli) => jobAbort(cli, { id: at(a, 0) }),
  },
  'node status': {
    args: '[NODE ...]',
    summary: 'show whether nodes are up; an argument with ":" is a node search',
    options: {},
    positionals: [0, Infinity],
    plan: (a) => (cli) => nodeStatus(cli, { nodes: a }),
  },
  'node whitelist list': {
    args: 'NODE',
    summary: "list the commands a node's whitelist allows",
    options: {},
    positionals: [1, 1],
    plan: (a) => (cli) => whitelistList(cli, { node: at(a, 0) }),
  },
  'node whitelist set': {
    args: 'NODE NAME COMMAND',
    summary: "add NAME to a node's whitelist, or change its command",
    options: {},
    positionals: [3, 3],
    plan: (a) => (cli) => whitelistSet(cli, { node: at(a, 0), name: at(a, 1), command: at(a, 2) }),
  },
  'node whitelist remove': {
    args: 'NODE NAME',
    summary: "remove NAME from a node's whitelist",
    options: {},
    positionals: [2, 2],
    plan: (a) => (cli) => whitelistRemove(cli, { node: at(a, 0), name: at(a, 1) }),
  },
  'schedule add': {
    args: 'NAME CRON COMMAND [NODE ...]',
    summary: "start COMMAND on nodes at the times CRON names, such as '0 3 * * *' (quoted: one argument)",
    options: SCHEDULE_ADD_OPTIONS,
    positionals: [3, Infinity],
    plan: (a, v) => {
      const o = scheduleAddOptionsOf(a, v);
      return (cli) => scheduleAdd(cli, o);
    },
  },
  'schedule list': {
    args: '',
    summary: 'list the schedules of the organization: their expression, state, next run and last job',
    options: {},
    positionals: [0, 0],
    plan: () => (cli) => scheduleList(cli),
  },
  'schedule show': {
    args: 'NAME',
    summary: 'show a schedule: its job, expression, next run and latest jobs',
    options: {},
    positionals: [1, 1],
    plan: (a) => (cli) => scheduleShow(cli, { name: at(a, 0) }),
  },
  'schedule delete': scheduleChangeCommand('delete', 'delete a schedule; the jobs it started stay'),
  'schedule pause': scheduleChangeCommand('pause', 'stop a schedule firing until it is resumed'),
  'schedule resume': scheduleChangeCommand('resume', 'fire a paused schedule again, from its next occurrence on'),
  'user list': {
    args: '',
    summary: 'list user accounts (server-admins)',
    options: { 'with-uri': { type: 'boolean', short: 'w', help: 'show each URI' } },
    positionals: [0, 0],
    plan: (_a, v) => (cli) => userList(cli, { withUri: flag(v, 'with-uri') }),
  },
  'user show': {
    args: 'USER',
    summary: 'show a user account',
    options: {},
    positionals: [1, 1],
    plan: (a) => (cli) => userShow(cli, { name: at(a, 0) }),
  },
  'user create': {
    args: 'USER --email ADDRESS --password PASSWORD',
    summary: 'create a user account and print its private key',
    options: {
      ...profile,
      file: { type: 'string', short: 'f', arg: 'FILE', help: 'write the private key to FILE instead of stdout' },
    },
    positionals: [1, 1],
    plan: (a, v) => {
      const { email, password, ...fields } = profileOf(v);
      if (email === undefined) throw CommandError.usage('user create needs --email ADDRESS');
      if (password === undefined) throw CommandError.usage('user create needs --password PASSWORD');
      return (cli) => userCreate(cli, { name: at(a, 0), fields: { ...fields, email, password }, file: str(v, 'file') });
    },
  },
  'user edit': {
    args: 'USER',
    summary: 'change fields of a user account',
    options: { ...profile, 'new-name': { type: 'string', arg: 'NAME', help: 'rename the account' } },
    positionals: [1, 1],
    plan: (a, v) => {
      const changes = userChanges(profileOf(v), str(v, 'new-name'));
      return (cli) => userEdit(cli, { name: at(a, 0), changes });
    },
  },
  'user delete': {
    args: 'USER',
    summary: 'delete a user account',
    options: { yes: { type: 'boolean', short: 'y', help: 'do not ask for confirmation' } },
    positionals: [1, 1],
    plan: (a, v) => (cli) => userDelete(cli, { name: at(a, 0), yes: flag(v, 'yes') }),
  },
};

/** config.rb and what overrides it; the working folder and home come from the process. */
export type CliConnection = Omit<CliTargetOptions, 'cwd' | 'home'>;

const CONNECTION_OPTIONS: Record<string, OptionSpec> = {
  config: {
    type: 'string',
    short: 'c',
    arg: 'FILE',
    help: 'config.rb to use (default: .infra/config.rb here or above, else ~/.infra/config.rb)',
  },
  'server-url': {
    type: 'string',
    arg: 'URL',
    help: 'server URL, https://HOST/organizations/ORG (overrides server_url)',
  },
  user: { type: 'string', short: 'u', arg: 'NAME', help: 'user to sign requests as (overrides node_name)' },
  key: { type: 'string', short: 'k', arg: 'FILE', help: "the user's private key (overrides client_key)" },
};

function connectionOf(v: Values): CliConnection {
  const connection: CliConnection = {};
  for (const [field, option] of [
    ['config', 'config'],
    ['serverUrl', 'server-url'],
    ['user', 'user'],
    ['key', 'key'],
  ] as const) {
    const value = str(v, option);
    if (value !== undefined) connection[field] = value;
  }
  return connection;
}

export const CLI: Tool<Cli, CliConnection> = {
  name: 'cli',
  heading: 'Commands:',
  commands: COMMANDS,
  common: CONNECTION_OPTIONS,
  label: (name) => `cli ${name}`,
  connection: connectionOf,
};
