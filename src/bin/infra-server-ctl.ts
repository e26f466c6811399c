#!/usr/bin/env node
// infra-server-ctl: administration commands run as the superuser (spec 4.6). Only argv parsing lives here.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { connectCtl, type Ctl } from '../cli/ctl/connection.js';
import { orgUserAdd, orgUserRemove } from '../cli/ctl/org-users.js';
import { orgCreate, orgDelete, orgList, orgShow } from '../cli/ctl/orgs.js';
import { grantServerAdmin, listServerAdmins, removeServerAdmin } from '../cli/ctl/server-admins.js';
import { userCreate, userDelete, userList, userShow } from '../cli/ctl/users.js';
import { EXIT, exitWhenDone, OUTPUT_FORMATS, parseFormat, runCommand, Ui } from '../cli/output.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | Array<string | boolean> | undefined>;

interface Command {
  args: string;
  summary: string;
  /** Option name -> its spec and the help line's text. */
  options: Record<string, Options[string] & { help: string; arg?: string }>;
  positionals: [min: number, max: number];
  /** Said instead of the generic message when the argument count is wrong. */
  countMessage?: string;
  run(ctl: Ctl, args: string[], values: Values): Promise<void>;
}

const str = (v: Values, name: string): string | undefined => {
  const value = v[name];
  return typeof value === 'string' ? value : undefined;
};
const flag = (v: Values, name: string): boolean => v[name] === true;
const at = (args: string[], i: number): string => args[i] ?? '';

const yes = { type: 'boolean', short: 'y', help: 'do not ask for confirmation' } as const;

const COMMANDS: Record<string, Command> = {
  'org-create': {
    args: 'ORG_NAME "ORG_FULL_NAME"', summary: 'create an organization and print its validator key',
    options: {
      association_user: { type: 'string', short: 'a', arg: 'USER', help: 'associate USER and add it to admins and billing_admins' },
      filename: { type: 'string', short: 'f', arg: 'FILE', help: 'write the validator key to FILE instead of stdout' },
    },
    positionals: [2, 2], countMessage: 'You must specify an ORG_NAME and an ORG_FULL_NAME',
    run: (ctl, a, v) => orgCreate(ctl, {
      name: at(a, 0), fullName: at(a, 1), associateUser: str(v, 'association_user'), file: str(v, 'filename'),
    }),
  },
  'org-delete': {
    args: 'ORG_NAME', summary: 'delete an organization', options: { yes }, positionals: [1, 1],
    run: (ctl, a, v) => orgDelete(ctl, { name: at(a, 0), yes: flag(v, 'yes') }),
  },
  'org-list': {
    args: '', summary: 'list the organizations',
    options: {
      'all-orgs': { type: 'boolean', short: 'a', help: 'also show pre-created organizations (20 letters)' },
      'with-uri': { type: 'boolean', short: 'w', help: 'show each URI' },
    },
    positionals: [0, 0],
    run: (ctl, _a, v) => orgList(ctl, { all: flag(v, 'all-orgs'), withUri: flag(v, 'with-uri') }),
  },
  'org-show': {
    args: 'ORG_NAME', summary: 'show an organization', options: {}, positionals: [1, 1],
    run: (ctl, a) => orgShow(ctl, { name: at(a, 0) }),
  },
  'org-user-add': {
    args: 'ORG_NAME USER_NAME', summary: 'associate a user with an organization',
    options: { admin: { type: 'boolean', short: 'a', help: 'also add the user to admins and billing_admins' } },
    positionals: [2, 2], countMessage: 'You must specify an ORG_NAME and USER_NAME',
    run: (ctl, a, v) => orgUserAdd(ctl, { org: at(a, 0), user: at(a, 1), admin: flag(v, 'admin') }),
  },
  'org-user-remove': {
    args: 'ORG_NAME USER_NAME', summary: 'remove a user from an organization',
    options: { force: { type: 'boolean', help: 'first remove the user from admins and billing_admins' } },
    positionals: [2, 2], countMessage: 'You must specify an ORG_NAME and USER_NAME',
    run: (ctl, a, v) => orgUserRemove(ctl, { org: at(a, 0), user: at(a, 1), force: flag(v, 'force') }),
  },
  'user-create': {
    args: "USER_NAME FIRST_NAME [MIDDLE_NAME] LAST_NAME EMAIL 'PASSWORD'", summary: 'create a user and print its private key',
    options: {
      filename: { type: 'string', short: 'f', arg: 'FILE', help: 'write the private key to FILE instead of stdout' },
      orgname: { type: 'string', short: 'o', arg: 'ORG', help: 'associate the user with ORG' },
    },
    positionals: [5, 6],
    run: (ctl, a, v) => {
      const middle = a.length === 6;
      return userCreate(ctl, {
        username: at(a, 0), firstName: at(a, 1), lastName: at(a, middle ? 3 : 2),
        email: at(a, middle ? 4 : 3), password: at(a, middle ? 5 : 4),
        middleName: middle ? at(a, 2) : undefined, file: str(v, 'filename'), org: str(v, 'orgname'),
      });
    },
  },
  'user-list': {
    args: '', summary: 'list every user, superusers included',
    options: {
      'with-uri': { type: 'boolean', short: 'w', help: 'show each URI' },
      'all-info': { type: 'boolean', short: 'a', help: 'show names and email addresses' },
    },
    positionals: [0, 0],
    run: (ctl, _a, v) => userList(ctl, { withUri: flag(v, 'with-uri'), allInfo: flag(v, 'all-info') }),
  },
  'user-show': {
    args: 'USER_NAME', summary: 'show a user',
    options: { 'with-orgs': { type: 'boolean', short: 'l', help: "also list the user's organizations" } },
    positionals: [1, 1],
    run: (ctl, a, v) => userShow(ctl, { name: at(a, 0), withOrgs: flag(v, 'with-orgs') }),
  },
  'user-delete': {
    args: 'USER_NAME', summary: 'delete a user and its associations', options: { yes }, positionals: [1, 1],
    run: (ctl, a, v) => userDelete(ctl, { name: at(a, 0), yes: flag(v, 'yes') }),
  },
  'grant-server-admin-permissions': {
    args: 'USER_NAME', summary: 'add a user to server-admins', options: {}, positionals: [1, 1],
    countMessage: 'Username is the only argument to grant-server-admin-permissions.\nPlease pass a single argument.',
    run: (ctl, a) => grantServerAdmin(ctl, { user: at(a, 0) }),
  },
  'remove-server-admin-permissions': {
    args: 'USER_NAME', summary: 'remove a user from server-admins', options: {}, positionals: [1, 1],
    countMessage: 'Username is the only argument to remove-server-admin-permissions.\nPlease pass a single argument.',
    run: (ctl, a) => removeServerAdmin(ctl, { user: at(a, 0) }),
  },
  'list-server-admins': {
    args: '', summary: 'list the members of server-admins', options: {}, positionals: [0, 0],
    countMessage: 'This command does not accept arguments.',
    run: (ctl) => listServerAdmins(ctl),
  },
};

const COMMON: Command['options'] = {
  config: { type: 'string', short: 'c', arg: 'FILE', help: 'the server settings file (default: ./push-jobs-server.rb when present)' },
  format: { type: 'string', short: 'F', arg: 'FORMAT', help: `output format: ${OUTPUT_FORMATS.join(', ')} (default summary)` },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

function mainHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  return [
    'Usage: infra-server-ctl COMMAND [ARGUMENTS] [-c FILE] [-F FORMAT]',
    '',
    'Commands (each signs its requests as the superuser pivotal, whose key is in the server\'s data_dir):',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Run infra-server-ctl COMMAND --help for its arguments and options.',
  ].join('\n');
}

function commandHelp(name: string, c: Command): string {
  const options = { ...c.options, ...COMMON };
  const left = (n: string, o: Command['options'][string]) =>
    `${o.short === undefined ? '    ' : `-${o.short}, `}--${n}${o.arg === undefined ? '' : ` ${o.arg}`}`;
  const width = Math.max(...Object.entries(options).map(([n, o]) => left(n, o).length));
  return [
    `Usage: infra-server-ctl ${name}${c.args === '' ? '' : ` ${c.args}`} [options]`,
    '',
    `${c.summary[0]?.toUpperCase() ?? ''}${c.summary.slice(1)}.`,
    '',
    ...Object.entries(options).map(([n, o]) => `  ${left(n, o).padEnd(width)}  ${o.help}`),
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const ui = new Ui({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin });
  const [name, ...rest] = argv;
  if (name === '-h' || name === '--help' || name === 'help') {
    ui.msg(mainHelp());
    return EXIT.ok;
  }
  if (name === undefined) {
    ui.info(mainHelp());
    return EXIT.usage;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    ui.error(`unknown command '${name}'; run infra-server-ctl --help for the list`);
    return EXIT.usage;
  }
  const usageError = (message: string): number => {
    ui.error(message);
    ui.info(commandHelp(name, command));
    return EXIT.usage;
  };
  let parsed;
  try {
    const options: Options = Object.fromEntries(
      Object.entries({ ...command.options, ...COMMON }).map(([n, { help: _help, arg: _arg, ...spec }]) => [n, spec]),
    );
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  } catch (e) {
    return usageError(e instanceof Error ? e.message : String(e));
  }
  const values: Values = parsed.values;
  if (flag(values, 'help')) {
    ui.msg(commandHelp(name, command));
    return EXIT.ok;
  }
  const [min, max] = command.positionals;
  if (parsed.positionals.length < min || parsed.positionals.length > max) {
    const count = min === max ? `${min}` : `${min} to ${max}`;
    return usageError(command.countMessage ?? `${name} takes ${count} argument${max === 1 ? '' : 's'}, got ${parsed.positionals.length}`);
  }
  const formatName = str(values, 'format') ?? 'summary';
  const format = parseFormat(formatName);
  if (format === undefined) return usageError(`unknown format '${formatName}': use one of ${OUTPUT_FORMATS.join(', ')}`);

  const out = new Ui({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }, format);
  return runCommand(out, async () => {
    const config = str(values, 'config');
    const api = await connectCtl(config === undefined ? {} : { file: config });
    await command.run({ api, ui: out }, parsed.positionals, values);
  });
}

exitWhenDone(main(process.argv.slice(2)));
