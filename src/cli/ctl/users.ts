// user-create, user-list, user-show and user-delete (reference 4.1 and 6).
import { z } from 'zod';
import { CommandError } from '../terminal.js';
import { CTL_USER, type Ctl } from './connection.js';
import { checkKeyFile, deliverKey } from './key-file.js';
import { associateUser } from './org-users.js';

const userCreatedSchema = z.object({ chef_key: z.object({ private_key: z.string() }) });
const userSchema = z.record(z.string(), z.unknown());
const userListSchema = z.record(z.string(), z.string());
const verboseListSchema = z.record(z.string(), z.record(z.string(), z.unknown()));
const userOrgsSchema = z.array(z.object({ organization: z.object({ name: z.string() }) }));

export interface UserCreateOptions {
  username: string;
  firstName: string;
  middleName?: string;
  lastName: string;
  email: string;
  password: string;
  /** -f: write the private key here instead of stdout. */
  file?: string;
  /** -o: associate the new user with this organization. */
  org?: string;
}

export async function userCreate(ctl: Ctl, o: UserCreateOptions): Promise<void> {
  if (o.file !== undefined) await checkKeyFile(o.file);
  if (o.org !== undefined) await ctl.api.call('GET', ctl.api.rootPath('organizations', o.org), userSchema);
  const body: Record<string, unknown> = {
    username: o.username,
    first_name: o.firstName,
    last_name: o.lastName,
    display_name: `${o.firstName} ${o.lastName}`,
    email: o.email,
    password: o.password,
    create_key: true,
  };
  if (o.middleName !== undefined) body.middle_name = o.middleName;
  const created = await ctl.api.call('POST', ctl.api.rootPath('users'), userCreatedSchema, body);
  await deliverKey(ctl.ui, created.chef_key.private_key, o.file, `the private key of ${o.username}`);
  if (o.org === undefined) return;
  try {
    await associateUser(ctl, o.org, o.username);
  } catch (e) {
    if (!(e instanceof CommandError)) throw e;
    throw new CommandError(
      `user ${o.username} was created, but could not be associated with ${o.org}: ${e.message}`,
      [`Run: infra-server-ctl org-user-add ${o.org} ${o.username}`],
      1,
      { cause: e },
    );
  }
}

export async function userList(ctl: Ctl, o: { withUri: boolean; allInfo: boolean }): Promise<void> {
  if (o.allInfo) {
    ctl.ui.output(await ctl.api.call('GET', `${ctl.api.rootPath('users')}?verbose=true`, verboseListSchema));
    return;
  }
  const users = await ctl.api.call('GET', ctl.api.rootPath('users'), userListSchema);
  ctl.ui.output(o.withUri ? users : Object.keys(users).sort());
}

export async function userShow(ctl: Ctl, o: { name: string; withOrgs: boolean }): Promise<void> {
  const user = await ctl.api.call('GET', ctl.api.rootPath('users', o.name), userSchema);
  if (o.withOrgs) {
    const orgs = await ctl.api.call('GET', ctl.api.rootPath('users', o.name, 'organizations'), userOrgsSchema);
    user.organizations = orgs.map((x) => x.organization.name);
  }
  ctl.ui.output(user);
}

export async function userDelete(ctl: Ctl, o: { name: string; yes: boolean }): Promise<void> {
  if (o.name === CTL_USER) {
    throw new CommandError(
      `You cannot delete the superuser ${CTL_USER}: infra-server-ctl signs every request as ${CTL_USER}.`,
    );
  }
  const path = ctl.api.rootPath('users', o.name);
  // An unknown user fails before the question is asked.
  await ctl.api.call('GET', path, userSchema);
  if (!o.yes) await ctl.ui.confirm(`Do you want to delete the user ${o.name}`);
  await ctl.api.call('DELETE', path, userSchema);
  ctl.ui.msg(`Deleted user ${o.name}`);
}
