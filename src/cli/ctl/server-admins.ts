// grant-server-admin-permissions, remove-server-admin-permissions and list-server-admins (spec 2.2, 4.6;
// reference 6), through the server's own /server-admins path (reference 9.12).
import { z } from 'zod';
import { apiFailure } from '../api-connection.js';
import type { Ctl } from './connection.js';

const adminsSchema = z.array(z.string());

export async function grantServerAdmin(ctl: Ctl, o: { user: string }): Promise<void> {
  const res = await ctl.api.request('POST', ctl.api.rootPath('server-admins'), { username: o.user });
  // Granting twice leaves the same state, so it is not a failure (the original re-added silently).
  if (res.status === 409) {
    ctl.ui.msg(`User ${o.user} is already a member of server-admins.`);
    return;
  }
  if (res.status >= 300) throw apiFailure(res);
  ctl.ui.msg(
    `User ${o.user} was added to server-admins. This user can now list, read, create, and delete users ` +
      '(even for orgs they are not members of) for this infra-server.',
  );
}

export async function removeServerAdmin(ctl: Ctl, o: { user: string }): Promise<void> {
  await ctl.api.call('DELETE', ctl.api.rootPath('server-admins', o.user), adminsSchema);
  ctl.ui.msg(
    `User ${o.user} was removed from the server-admins group. This user can no longer list, read, create, and ` +
      'delete users for this infra-server except for where they have default permissions (such as within an org).',
  );
}

export async function listServerAdmins(ctl: Ctl): Promise<void> {
  ctl.ui.output([...(await ctl.api.call('GET', ctl.api.rootPath('server-admins'), adminsSchema))].sort());
}
