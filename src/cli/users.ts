// `cli user create|delete|edit|list|show`: user accounts, for members of server-admins (spec 2.2, 4.6, 5.6,
// 5.7; reference 4.1). A user without the rights gets the server's 403, shown as "Missing read permission".
import { z } from 'zod';
import type { Cli } from './cli-connection.js';
import { formatFields } from './columns.js';
import { checkKeyFile, deliverKey } from './ctl/key-file.js';
import { CommandError } from './terminal.js';

const userListSchema = z.record(z.string(), z.string());
const userSchema = z.record(z.string(), z.unknown());
const userCreatedSchema = z.looseObject({ chef_key: z.looseObject({ private_key: z.string() }) });

/** The profile fields `create` and `edit` set, in the API's names. */
export interface UserFields {
  email?: string;
  password?: string;
  display_name?: string;
  first_name?: string;
  middle_name?: string;
  last_name?: string;
}

export async function userList(cli: Cli, o: { withUri: boolean }): Promise<void> {
  const users = await cli.api.call('GET', cli.api.rootPath('users'), userListSchema);
  const names = Object.keys(users).sort();
  if (cli.ui.format === 'json') cli.ui.output(o.withUri ? users : names);
  else if (o.withUri) cli.ui.raw(formatFields(names.map((n) => [n, users[n] ?? ''])));
  else cli.ui.raw(names.map((n) => `${n}\n`).join(''));
}

export async function userShow(cli: Cli, o: { name: string }): Promise<void> {
  cli.ui.output(await cli.api.call('GET', cli.api.rootPath('users', o.name), userSchema));
}

/** The display name when none is given: "FIRST LAST", else the user name. */
export function displayNameFor(username: string, f: UserFields): string {
  const full = [f.first_name, f.last_name].filter((p) => p !== undefined && p !== '').join(' ');
  return f.display_name ?? (full === '' ? username : full);
}

/** Creates the user with a new key pair and hands over the private key: stdout, or `file` with mode 0600. */
export async function userCreate(
  cli: Cli,
  o: { name: string; fields: UserFields & { email: string; password: string }; file?: string },
): Promise<void> {
  if (o.file !== undefined) await checkKeyFile(o.file);
  const body = { username: o.name, ...o.fields, display_name: displayNameFor(o.name, o.fields), create_key: true };
  const created = await cli.api.call('POST', cli.api.rootPath('users'), userCreatedSchema, body);
  cli.ui.info(`Created user ${o.name}`);
  await deliverKey(cli.ui, created.chef_key.private_key, o.file, `the private key of ${o.name}`);
}

/** The PUT body of `user edit`: only the fields given, `username` for a rename; nothing at all is a usage error. */
export function userChanges(fields: UserFields, newName?: string): Record<string, string> {
  const body: Record<string, string> = {};
  for (const [field, value] of Object.entries(fields)) if (value !== undefined) body[field] = value;
  if (newName !== undefined) body.username = newName;
  if (Object.keys(body).length === 0) {
    throw CommandError.usage(
      'nothing to change: give at least one of --email, --password, --display-name, --first-name, --middle-name, --last-name, --new-name',
    );
  }
  return body;
}

export async function userEdit(cli: Cli, o: { name: string; changes: Record<string, string> }): Promise<void> {
  await cli.api.call('PUT', cli.api.rootPath('users', o.name), z.unknown(), o.changes);
  const saved = o.changes.username ?? o.name;
  if (cli.ui.format === 'json') cli.ui.output(await cli.api.call('GET', cli.api.rootPath('users', saved), userSchema));
  else cli.ui.msg(saved === o.name ? `Saved user ${o.name}` : `Saved user ${o.name} as ${saved}`);
}

export async function userDelete(cli: Cli, o: { name: string; yes: boolean }): Promise<void> {
  const path = cli.api.rootPath('users', o.name);
  // An unknown user, or one this requestor may not see, fails before the question.
  await cli.api.call('GET', path, userSchema);
  if (!o.yes) await cli.ui.confirm(`Do you want to delete the user ${o.name}`);
  await cli.api.call('DELETE', path, z.unknown());
  cli.ui.msg(`Deleted user ${o.name}`);
}
