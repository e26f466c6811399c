// /users/NAME/_acl (reference 5.1, 5.3): a user account's ACL. Entries name users and global groups
// (server-admins); clients belong to organizations and have no place here.
import { PERMISSIONS, type Ace, type Permission } from '../../src/auth/acl.js';
import { userCan, type UsersOutcome, type UsersState } from './users-state.js';
import { fail, failBare, forbidden, ok, type RequestContext } from '../shared/reply.js';

export const GLOBAL_GROUPS: readonly string[] = ['server-admins'];

export type UserAclOp =
  | { type: 'get_user_acl'; name: string; granular: boolean }
  | {
      type: 'put_user_acl';
      name: string;
      perm: Permission;
      ace: { actors: string[]; groups: string[]; users?: string[]; clients?: string[] };
    };

export function handleUserAclOp(state: UsersState, ctx: RequestContext, op: UserAclOp): UsersOutcome {
  const u = state.users.get(op.name);
  if (!u) return { reply: failBare(404, `Could not find user ${op.name}`) };
  if (!userCan(state, ctx, u, 'grant')) return { reply: forbidden(op.type === 'get_user_acl' ? 'read' : 'update') };
  if (op.type === 'get_user_acl') {
    const json = (ace: Ace) =>
      op.granular
        ? { actors: [], users: ace.users, clients: [], groups: ace.groups }
        : { actors: ace.users, groups: ace.groups };
    return { reply: ok(Object.fromEntries(PERMISSIONS.map((p) => [p, json(u.acl[p])]))) };
  }
  if ((op.ace.clients ?? []).length > 0) return { reply: fail(400, 'Clients can not be added to global ACL entries.') };
  const users = op.ace.users ?? op.ace.actors;
  const unknown = users.filter((n) => !state.users.has(n));
  if (unknown.length === 1) return { reply: fail(400, `The user '${unknown[0]}' does not exist.`) };
  if (unknown.length > 1) return { reply: fail(400, `The users '${unknown.join("', '")}' do not exist.`) };
  const badGroups = op.ace.groups.filter((g) => !GLOBAL_GROUPS.includes(g.replace(/^::/, '')));
  if (badGroups.length > 0) return { reply: fail(400, `The group(s) '${badGroups.join("', '")}' do not exist.`) };
  const ace: Ace = {
    users: [...new Set(users)],
    clients: [],
    groups: [...new Set(op.ace.groups.map((g) => g.replace(/^::/, '')))],
  };
  return {
    reply: ok({}),
    writes: [{ coll: 'users', id: u.username, doc: { ...u, acl: { ...u.acl, [op.perm]: ace } } }],
  };
}
