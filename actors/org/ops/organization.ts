// The organization object itself and its user associations (reference 3). Associations live here, in the
// organization that every org-scoped request consults; the users actor keeps only a derived index.
import { accessFor, orgUri, type Access } from '../access.js';
import { keyReadDenied } from './clients.js';
import type { OrgState, OrgWrite } from '../org-state.js';
import type { HandlerEnv, OrgOutcome } from '../outcome.js';
import { renameWrites } from '../renames.js';
import { fail, failBare, forbidden, ok, type RequestContext } from '../../shared/reply.js';

export type OrgObjectOp =
  | { type: 'get_org' }
  | { type: 'update_org'; name: string; full_name: string }
  | { type: 'delete_org' }
  | { type: 'list_members' }
  | { type: 'add_member'; username: string }
  | { type: 'get_member'; username: string }
  | { type: 'remove_member'; username: string }
  /** May the requestor read this member's keys here? The users actor then answers (spec 4.3). */
  | { type: 'check_key_read'; username: string }
  /** Sent by the users actor after an account rename, never by a route. */
  | { type: 'rename_member'; from: string; to: string };

export function handleOrgObjectOp(state: OrgState, ctx: RequestContext, op: OrgObjectOp, env: HandlerEnv): OrgOutcome {
  const access = accessFor(state, ctx);
  const org = state.org;
  const orgJson = { name: org.name, full_name: org.full_name, guid: org.guid };
  switch (op.type) {
    case 'get_org':
      return access.can(org.acl, 'read') ? { reply: ok(orgJson) } : { reply: forbidden('read') };
    case 'update_org':
      if (!access.can(org.acl, 'update')) return { reply: forbidden('update') };
      if (op.name !== org.name) return { reply: fail(400, "Field 'name' invalid") };
      return {
        reply: ok({ name: org.name, full_name: op.full_name }),
        writes: [{ coll: 'org', id: org.name, doc: { ...org, full_name: op.full_name } }],
      };
    case 'delete_org':
      if (!access.can(org.acl, 'delete')) return { reply: forbidden('delete') };
      return {
        reply: ok(orgJson),
        writes: [{ coll: 'org', id: org.name, doc: null }],
        effects: [{ type: 'drop_org' }],
      };
    case 'list_members':
      if (!access.can(org.acl, 'read')) return { reply: forbidden('read') };
      return { reply: ok([...state.members.keys()].sort().map((username) => ({ user: { username } }))) };
    case 'add_member':
      return addMember(state, ctx, op.username, env);
    case 'get_member':
      if (!access.can(org.acl, 'read')) return { reply: forbidden('read') };
      if (!state.members.has(op.username)) return { reply: notMember(op.username, org.name) };
      return { reply: ok(null), effects: [{ type: 'answer_with_user', name: op.username, readBy: ctx }] };
    case 'remove_member':
      return removeMember(state, ctx, access, op.username);
    case 'check_key_read':
      if (!access.inGroup('public_key_read_access')) return { reply: keyReadDenied() };
      return { reply: state.members.has(op.username) ? ok(null) : notMember(op.username, org.name) };
    case 'rename_member':
      return renameMember(state, ctx, op.from, op.to);
  }
}

/** Force-association of a user with the organization, and its place in the `users` group. */
function addMember(state: OrgState, ctx: RequestContext, username: string, env: HandlerEnv): OrgOutcome {
  // Force-association is for superusers (reference 3); org admins invite instead.
  if (!ctx.requestor.superuser) return { reply: forbidden('create') };
  if (state.members.has(username)) return { reply: failBare(409, 'The association already exists.') };
  const writes: OrgWrite[] = [{ coll: 'members', id: username, doc: { username, since: env.now } }];
  const users = state.groups.get('users');
  if (users && !users.users.includes(username))
    writes.push({ coll: 'groups', id: 'users', doc: { ...users, users: [...users.users, username] } });
  const uri = `${orgUri(ctx, state)}/users/${username}`;
  return {
    reply: ok({ uri }, 201, uri),
    writes,
    effects: [{ type: 'associate', username, member: true }],
  };
}

/** Ends an association (a member may leave on its own), and the user's place in every group. */
function removeMember(state: OrgState, ctx: RequestContext, access: Access, username: string): OrgOutcome {
  const org = state.org;
  const self = ctx.requestor.kind === 'user' && ctx.requestor.name === username;
  if (!self && !access.can(org.acl, 'update')) return { reply: forbidden('update') };
  if (!state.members.has(username)) return { reply: notMember(username, org.name) };
  if (state.groups.get('admins')?.users.includes(username)) {
    return {
      reply: failBare(
        403,
        `Please remove ${username} from this organization's admins group before removing him or her from the organization.`,
      ),
    };
  }
  const writes: OrgWrite[] = [{ coll: 'members', id: username, doc: null }];
  for (const g of state.groups.values()) {
    if (g.users.includes(username))
      writes.push({ coll: 'groups', id: g.name, doc: { ...g, users: g.users.filter((u) => u !== username) } });
  }
  return {
    reply: ok(null),
    writes,
    effects: [
      { type: 'associate', username, member: false },
      { type: 'answer_with_user', name: username },
    ],
  };
}

/** After an account rename: it keeps its association, groups and ACL entries under its new name. */
function renameMember(state: OrgState, ctx: RequestContext, from: string, to: string): OrgOutcome {
  if (!ctx.requestor.superuser) return { reply: forbidden('update') };
  const member = state.members.get(from);
  const writes: OrgWrite[] = member
    ? [
        { coll: 'members', id: from, doc: null },
        { coll: 'members', id: to, doc: { ...member, username: to } },
      ]
    : [];
  writes.push(...renameWrites(state, 'users', from, to));
  return { reply: ok(null), writes };
}

function notMember(username: string, org: string) {
  return failBare(404, `Cannot find a user ${username} in organization ${org}`);
}
