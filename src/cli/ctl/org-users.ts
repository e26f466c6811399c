// org-user-add and org-user-remove (spec 4.6, reference 6), and the membership moves org-create -a and
// user-create -o share with them: associate a user, add it to or take it out of the admin groups.
import { z } from 'zod';
import { errorText } from '../../auth/api-client.js';
import { CommandError } from '../terminal.js';
import { apiFailure } from '../api-connection.js';
import { CTL_USER, type Ctl } from './connection.js';

/** Groups an organization admin belongs to; spec 2.2 spells the second with an underscore. */
export const ADMIN_GROUPS = ['admins', 'billing_admins'] as const;

const groupSchema = z.object({
  users: z.array(z.string()),
  clients: z.array(z.string()),
  groups: z.array(z.string()),
});
type GroupMembers = z.infer<typeof groupSchema>;

/** Force-associates `user` with `org` (superuser only); false when it already was a member. */
export async function associateUser(ctl: Ctl, org: string, user: string): Promise<boolean> {
  const res = await ctl.api.request('POST', ctl.api.rootPath('organizations', org, 'users'), { username: user });
  if (res.status === 409) return false;
  if (res.status >= 300) throw apiFailure(res);
  return true;
}

function getGroup(ctl: Ctl, org: string, group: string): Promise<GroupMembers> {
  return ctl.api.call('GET', ctl.api.rootPath('organizations', org, 'groups', group), groupSchema);
}

/**
 * Sends only the users list, so the group's clients and nested groups stay as they are (reference 4.4). The
 * server drops names that are not members of the organization, so the answer is checked.
 */
async function setGroupUsers(ctl: Ctl, org: string, group: string, users: string[]): Promise<GroupMembers> {
  const path = ctl.api.rootPath('organizations', org, 'groups', group);
  return ctl.api.call('PUT', path, groupSchema, { groupname: group, actors: { users } });
}

export async function addToAdminGroups(ctl: Ctl, org: string, user: string): Promise<void> {
  for (const group of ADMIN_GROUPS) {
    const current = await getGroup(ctl, org, group);
    if (current.users.includes(user)) continue;
    const updated = await setGroupUsers(ctl, org, group, [...current.users, user]);
    if (!updated.users.includes(user)) {
      throw new CommandError(`the ${group} group of ${org} did not take ${user}: is ${user} associated with ${org}?`);
    }
  }
}

/** Returns the groups `user` was taken out of. */
async function removeFromAdminGroups(ctl: Ctl, org: string, user: string): Promise<string[]> {
  const left: string[] = [];
  for (const group of ADMIN_GROUPS) {
    const current = await getGroup(ctl, org, group);
    if (!current.users.includes(user)) continue;
    await setGroupUsers(
      ctl,
      org,
      group,
      current.users.filter((u) => u !== user),
    );
    left.push(group);
  }
  return left;
}

/** reference 6: admins keeps no actor but the superuser, and no nested group, once `user` is gone. */
function wouldLeaveAdminsEmpty(admins: GroupMembers, user: string): boolean {
  const others = [...admins.users, ...admins.clients].filter((a) => a !== user && a !== CTL_USER);
  return others.length === 0 && admins.groups.length === 0;
}

export interface OrgUserAddOptions {
  org: string;
  user: string;
  admin: boolean;
}

export async function orgUserAdd(ctl: Ctl, o: OrgUserAddOptions): Promise<void> {
  if (!(await associateUser(ctl, o.org, o.user)))
    ctl.ui.info(`User ${o.user} already associated with organization ${o.org}`);
  if (!o.admin) return;
  await addToAdminGroups(ctl, o.org, o.user);
  ctl.ui.msg(`User ${o.user} is added to ${ADMIN_GROUPS.join(' and ')} group`);
}

export interface OrgUserRemoveOptions {
  org: string;
  user: string;
  /** Take the user out of the admin groups first. */
  force: boolean;
}

export async function orgUserRemove(ctl: Ctl, o: OrgUserRemoveOptions): Promise<void> {
  const failed = `Error removing user ${o.user} from organization ${o.org}.`;
  if (o.force) {
    const admins = await getGroup(ctl, o.org, 'admins');
    if (admins.users.includes(o.user) && wouldLeaveAdminsEmpty(admins, o.user)) {
      throw new CommandError(failed, [
        'You ran with --force which force removes the user from the admins and billing_admins groups.',
        `However, removing ${o.user} from the admins group would leave it empty, which breaks the org.`,
        `Please add another user to org ${o.org} admins group and try again.`,
      ]);
    }
    if ((await removeFromAdminGroups(ctl, o.org, o.user)).length === 0) {
      ctl.ui.warn(`User ${o.user} is in neither the admins nor the billing_admins group of organization ${o.org}.`);
      ctl.ui.info("You probably don't need to pass --force.");
    }
  }
  const res = await ctl.api.request('DELETE', ctl.api.rootPath('organizations', o.org, 'users', o.user));
  if (res.status < 300) return;
  const text = errorText(res.body);
  if (res.status === 404 && text.startsWith('Cannot find a user')) {
    throw new CommandError(`User ${o.user} is not associated with organization ${o.org}`);
  }
  if (res.status === 403 && text.includes('admins group before removing')) {
    throw new CommandError(failed, [
      `User ${o.user} is in the organization's admin group. Removing users from an organization without removing them from the admins group is not allowed.`,
      'Re-run this command with --force to remove this user from the admins prior to removing it from the organization.',
    ]);
  }
  throw apiFailure(res);
}
