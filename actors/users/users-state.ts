// The users actor's state (plain data), what its pure operations decide, and who may act on an account
// (spec 5.6). Shared by the account operations and the account ACL endpoints.
import type { UserDoc } from '../shared/documents.js';
import type { Reply, RequestContext } from '../shared/reply.js';

export interface UsersState {
  users: Map<string, UserDoc>;
  serverAdmins: Set<string>;
  /** user -> organizations it is associated with; derived from the organizations, never persisted here. */
  orgsOf: Map<string, Set<string>>;
  /** organization -> its full name and guid, kept current by the organizations, for /users/NAME/organizations. */
  orgInfo: Map<string, { full_name: string; guid: string }>;
}

export type UsersWrite =
  { coll: 'users'; id: string; doc: UserDoc | null } | { coll: 'server-admins'; users: string[] };

export interface UsersOutcome {
  reply: Reply;
  writes?: UsersWrite[];
  /** Organizations to tell that this user is gone. */
  deletedFrom?: { username: string; orgs: string[] };
  /** Every organization must move this user's mentions to the new name. */
  renamed?: { from: string; to: string };
}

export type UserPermission = 'read' | 'update' | 'delete' | 'grant';

/** Spec 5.6: server-admins manage user accounts, never superusers; members of a shared org may read. */
export function userCan(state: UsersState, ctx: RequestContext, target: UserDoc, perm: UserPermission): boolean {
  const r = ctx.requestor;
  if (r.superuser) return true;
  if (target.superuser || r.kind !== 'user') return false;
  if (r.name === target.username) return true;
  if (target.acl[perm].users.includes(r.name)) return true;
  if (r.serverAdmin && target.acl[perm].groups.includes('server-admins')) return true;
  if (perm !== 'read') return false;
  const mine = state.orgsOf.get(r.name);
  const theirs = state.orgsOf.get(target.username);
  return mine !== undefined && theirs !== undefined && [...mine].some((o) => theirs.has(o));
}
