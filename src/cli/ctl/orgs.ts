// org-create, org-delete, org-list and org-show (spec 4.6, reference 3 and 6).
import { z } from 'zod';
import { orgNamePattern } from '../../config/settings-file.js';
import { CommandError } from '../terminal.js';
import type { Ctl } from './connection.js';
import { checkKeyFile, deliverKey } from './key-file.js';
import { addToAdminGroups, associateUser } from './org-users.js';

const orgCreatedSchema = z.object({ private_key: z.string() });
const orgSchema = z.record(z.string(), z.unknown());
const orgListSchema = z.record(z.string(), z.string());
const userSchema = z.record(z.string(), z.unknown());

/** Old hosted servers pre-created organizations with 20 random letters; org-list hides them (reference 6). */
const PRECREATED = /^[a-z]{20}$/;

export interface OrgCreateOptions {
  name: string;
  fullName: string;
  /** -a: associate this user and add it to the admin groups. */
  associateUser?: string;
  /** -f: write the validator key here instead of stdout. */
  file?: string;
}

/** spec 2.1, checked here so a mistyped name gets the rule rather than the server's `Field 'name' invalid`. */
const FULL_NAME = /^\S.{0,1022}$/s;

export async function orgCreate(ctl: Ctl, o: OrgCreateOptions): Promise<void> {
  if (!orgNamePattern.test(o.name)) {
    throw CommandError.usage(
      `invalid organization name '${o.name}': it must start with a lowercase letter or digit, ` +
        'contain only lowercase letters, digits, - and _, and be 1 to 255 characters long',
    );
  }
  if (!FULL_NAME.test(o.fullName)) {
    throw CommandError.usage(
      'invalid organization full name: it must start with a non-space character and be 1 to 1023 characters long',
    );
  }
  // Everything that can be checked beforehand is: a failure after the create would leave a half-made org.
  if (o.file !== undefined) await checkKeyFile(o.file);
  if (o.associateUser !== undefined) await ctl.api.call('GET', ctl.api.rootPath('users', o.associateUser), userSchema);
  const created = await ctl.api.call('POST', ctl.api.rootPath('organizations'), orgCreatedSchema, {
    name: o.name,
    full_name: o.fullName,
  });
  await deliverKey(ctl.ui, created.private_key, o.file, `the validator key of ${o.name}`);
  if (o.associateUser === undefined) return;
  try {
    await associateUser(ctl, o.name, o.associateUser);
    await addToAdminGroups(ctl, o.name, o.associateUser);
  } catch (e) {
    if (!(e instanceof CommandError)) throw e;
    throw new CommandError(
      `organization ${o.name} was created, but ${o.associateUser} could not be made its admin: ${e.message}`,
      [`Run: infra-server-ctl org-user-add ${o.name} ${o.associateUser} --admin`],
      1,
      { cause: e },
    );
  }
}

export async function orgDelete(ctl: Ctl, o: { name: string; yes: boolean }): Promise<void> {
  const path = ctl.api.rootPath('organizations', o.name);
  // An unknown organization fails before the question is asked.
  await ctl.api.call('GET', path, orgSchema);
  if (!o.yes) await ctl.ui.confirm(`Do you want to delete the organization ${o.name}`);
  ctl.ui.output(await ctl.api.call('DELETE', path, orgSchema));
}

export async function orgList(ctl: Ctl, o: { all: boolean; withUri: boolean }): Promise<void> {
  const orgs = await ctl.api.call('GET', ctl.api.rootPath('organizations'), orgListSchema);
  const shown = Object.entries(orgs)
    .filter(([name]) => o.all || !PRECREATED.test(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  ctl.ui.output(o.withUri ? Object.fromEntries(shown) : shown.map(([name]) => name));
}

export async function orgShow(ctl: Ctl, o: { name: string }): Promise<void> {
  ctl.ui.output(await ctl.api.call('GET', ctl.api.rootPath('organizations', o.name), orgSchema));
}
