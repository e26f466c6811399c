// Global users, superusers and the server-admins group (spec 2.2, 5.6, 5.7; reference 4.1, 5.3). Pure:
// each operation reads the users state and returns a reply plus the writes that make it true.
import { handleUserAclOp, type UserAclOp } from './user-acl.js';
import { ownerAcl, renameInAcl } from '../../src/auth/acl.js';
import type { UserDoc } from '../shared/documents.js';
import { userCan, type UsersOutcome, type UsersState, type UsersWrite } from './users-state.js';
import { createdWithKey } from '../shared/key-ops.js';
import { handleUserKeyOp, type UserKeyOp } from './user-keys.js';
import { fail, failBare, forbidden, ok, type RequestContext } from '../shared/reply.js';

export interface UserInput {
  username: string;
  email: string;
  display_name?: string;
  first_name?: string;
  middle_name?: string;
  last_name?: string;
  password_hash?: string;
  public_key?: string;
  generated?: { privateKeyPem: string; publicKeyPem: string };
}

export type UserOp =
  | { type: 'list_users'; email?: string; verbose: boolean }
  | { type: 'create_user'; input: UserInput }
  | { type: 'get_user'; name: string }
  | { type: 'update_user'; name: string; input: Partial<UserInput> }
  | { type: 'delete_user'; name: string }
  | { type: 'list_user_orgs'; name: string }
  | { type: 'list_server_admins' }
  | { type: 'grant_server_admin'; name: string }
  | { type: 'remove_server_admin'; name: string }
  | UserKeyOp
  | UserAclOp;

/** A new user's ACL: itself on everything; server-admins create, read, update, delete (reference 5.3). */
export function newUserAcl(username: string) {
  const acl = ownerAcl('user', username);
  for (const p of ['create', 'read', 'update', 'delete'] as const) acl[p].groups = ['server-admins'];
  return acl;
}

export function userJson(u: UserDoc, apiVersion: number): Record<string, unknown> {
  const body: Record<string, unknown> = { username: u.username, email: u.email, display_name: u.display_name };
  for (const f of ['first_name', 'middle_name', 'last_name'] as const) if (u[f] !== undefined) body[f] = u[f];
  if (apiVersion < 1 && u.keys.default) body.public_key = u.keys.default.public_key;
  return body;
}

export function handleUserOp(state: UsersState, ctx: RequestContext, op: UserOp, nowMs: number): UsersOutcome {
  const r = ctx.requestor;
  const admin = r.superuser || (r.kind === 'user' && r.serverAdmin);
  const base = `${ctx.baseUrl}/users`;
  switch (op.type) {
    case 'list_users': {
      if (!admin) return { reply: forbidden('read') };
      const email = op.email?.toLowerCase();
      const users = [...state.users.values()]
        .filter((u) => email === undefined || u.email === email)
        .sort((a, b) => a.username.localeCompare(b.username));
      return {
        reply: ok(
          Object.fromEntries(
            users.map((u) => [
              u.username,
              op.verbose
                ? {
                    email: u.email,
                    first_name: u.first_name ?? '',
                    last_name: u.last_name ?? '',
                    display_name: u.display_name,
                  }
                : `${base}/${u.username}`,
            ]),
          ),
        ),
      };
    }
    case 'create_user':
      return createUser(state, ctx, op.input, admin, base);
    case 'list_server_admins':
      if (!admin) return { reply: forbidden('read') };
      return { reply: ok([...state.serverAdmins].sort()) };
    case 'grant_server_admin':
    case 'remove_server_admin':
      return changeServerAdmins(state, ctx, op);
    case 'get_user_acl':
    case 'put_user_acl':
      return handleUserAclOp(state, ctx, op);
    case 'list_user_keys':
    case 'read_member_keys':
    case 'get_user_key':
    case 'create_user_key':
    case 'update_user_key':
    case 'delete_user_key':
      return handleUserKeyOp(state, ctx, op, nowMs, base);
    default:
      return handleOneUser(state, ctx, op, base);
  }
}

/** `get_user`, `list_user_orgs`, `update_user` and `delete_user`: one account, once the requester may. */
function handleOneUser(
  state: UsersState,
  ctx: RequestContext,
  op: Extract<UserOp, { type: 'get_user' | 'list_user_orgs' | 'update_user' | 'delete_user' }>,
  base: string,
): UsersOutcome {
  const u = state.users.get(op.name);
  if (!u) return { reply: failBare(404, `Could not find user ${op.name}`) };
  const perm = op.type === 'update_user' ? 'update' : op.type === 'delete_user' ? 'delete' : 'read';
  if (!userCan(state, ctx, u, perm)) return { reply: forbidden(perm) };
  switch (op.type) {
    case 'get_user':
      return { reply: ok(userJson(u, ctx.apiVersion)) };
    case 'list_user_orgs':
      return { reply: ok(visibleOrgs(state, ctx, u)) };
    case 'update_user':
      return updateUser(state, op.input, u, base);
    case 'delete_user': {
      // Superusers sign the server's own administration; losing one locks infra-server-ctl out.
      if (u.superuser) return { reply: fail(403, `${u.username} is a superuser and cannot be deleted.`) };
      const writes: UsersWrite[] = [{ coll: 'users', id: u.username, doc: null }];
      if (state.serverAdmins.has(u.username))
        writes.push({ coll: 'server-admins', users: [...state.serverAdmins].filter((n) => n !== u.username) });
      return {
        reply: ok(userJson(u, ctx.apiVersion)),
        writes,
        deletedFrom: { username: u.username, orgs: [...(state.orgsOf.get(u.username) ?? [])] },
      };
    }
  }
}

/** The user's organizations; others see only the ones they share with it (reference 3). */
function visibleOrgs(state: UsersState, ctx: RequestContext, u: UserDoc) {
  const r = ctx.requestor;
  const all = [...(state.orgsOf.get(u.username) ?? [])];
  const mine = state.orgsOf.get(r.name);
  const visible =
    r.superuser || (r.kind === 'user' && r.name === u.username) ? all : all.filter((o) => mine?.has(o) === true);
  return visible.sort().map((name) => ({ organization: { name, ...state.orgInfo.get(name) } }));
}

/** Changes an account's fields; a new name moves the account, its own ACL and its place in server-admins. */
function updateUser(state: UsersState, input: Partial<UserInput>, u: UserDoc, base: string): UsersOutcome {
  const newName = input.username ?? u.username;
  if (newName !== u.username && state.users.has(newName))
    return { reply: fail(409, `User '${newName}' already exists`) };
  const email = input.email?.toLowerCase() ?? u.email;
  if (email !== u.email && [...state.users.values()].some((o) => o.email === email))
    return { reply: fail(409, 'Username or email address already in use.') };
  const doc: UserDoc = { ...u, ...defined(input), username: newName, email, keys: u.keys };
  delete (doc as { generated?: unknown }).generated;
  delete (doc as { public_key?: unknown }).public_key;
  const writes: UsersWrite[] = [{ coll: 'users', id: newName, doc }];
  if (newName === u.username) return { reply: ok({ uri: `${base}/${newName}` }), writes };
  // Rights are held by name: the account's own ACL and server-admins follow the rename.
  doc.acl = renameInAcl(u.acl, 'users', u.username, newName) ?? u.acl;
  writes.push({ coll: 'users', id: u.username, doc: null });
  if (state.serverAdmins.has(u.username)) {
    writes.push({
      coll: 'server-admins',
      users: [...state.serverAdmins].map((n) => (n === u.username ? newName : n)).sort(),
    });
  }
  return {
    reply: ok({ uri: `${base}/${newName}` }, 201, `${base}/${newName}`),
    writes,
    renamed: { from: u.username, to: newName },
  };
}

function createUser(
  state: UsersState,
  ctx: RequestContext,
  input: UserInput,
  admin: boolean,
  base: string,
): UsersOutcome {
  if (!admin) return { reply: forbidden('create') };
  const email = input.email.toLowerCase();
  if (state.users.has(input.username) || [...state.users.values()].some((u) => u.email === email)) {
    return { reply: fail(409, 'Username or email address already in use.') };
  }
  const publicKey = input.generated?.publicKeyPem ?? input.public_key;
  const doc: UserDoc = {
    username: input.username,
    email,
    display_name: input.display_name ?? input.username,
    ...defined({
      first_name: input.first_name,
      middle_name: input.middle_name,
      last_name: input.last_name,
      password_hash: input.password_hash,
    }),
    superuser: false,
    keys: publicKey ? { default: { public_key: publicKey, expiration_date: 'infinity' } } : {},
    acl: newUserAcl(input.username),
  };
  const uri = `${base}/${doc.username}`;
  return {
    reply: ok(createdWithKey(uri, publicKey, input.generated, ctx.apiVersion, false), 201, uri),
    writes: [{ coll: 'users', id: doc.username, doc }],
  };
}

function changeServerAdmins(
  state: UsersState,
  ctx: RequestContext,
  op: { type: 'grant_server_admin' | 'remove_server_admin'; name: string },
): UsersOutcome {
  // Only superusers change server-admins: membership is the power to manage every account.
  if (!ctx.requestor.superuser) return { reply: forbidden('update') };
  const u = state.users.get(op.name);
  if (!u) return { reply: fail(404, `User ${op.name} was not found.`) };
  const members = new Set(state.serverAdmins);
  if (op.type === 'grant_server_admin') {
    if (members.has(u.username))
      return { reply: fail(409, `User ${u.username} is already a member of server-admins.`) };
    members.add(u.username);
  } else {
    if (u.superuser)
      return { reply: fail(403, `You cannot remove the base superuser ${u.username} from server-admins.`) };
    if (!members.delete(u.username))
      return { reply: fail(404, `User ${u.username} is not a member of server-admins so it cannot be removed.`) };
  }
  return { reply: ok([...members].sort()), writes: [{ coll: 'server-admins', users: [...members].sort() }] };
}

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
