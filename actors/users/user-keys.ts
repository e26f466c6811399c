// A user account's keys (spec 5.7; reference 4.1): read by whoever may read the account, changed by whoever may
// update it, and an organization's member's keys read once that organization allowed it. Pure, as user-ops.ts:
// each operation returns a reply plus the account written with its new keys.
import { createKey, deleteKey, getKey, listKeys, updateKey, type KeyInput, type KeyResult } from '../shared/key-ops.js';
import { failBare, forbidden, type Reply, type RequestContext } from '../shared/reply.js';
import { userCan, type UserPermission, type UsersOutcome, type UsersState } from './users-state.js';

export type UserKeyOp =
  | { type: 'list_user_keys'; name: string }
  /** An organization's member's keys, once that organization allowed the read (spec 4.3); routes send it only then. */
  | { type: 'read_member_keys'; name: string; key?: string }
  | { type: 'get_user_key'; name: string; key: string }
  | { type: 'create_user_key'; name: string; input: KeyInput }
  | { type: 'update_user_key'; name: string; key: string; input: KeyInput }
  | { type: 'delete_user_key'; name: string; key: string };

/** `base`: the users' URL, under which each account's keys are named. */
export function handleUserKeyOp(
  state: UsersState,
  ctx: RequestContext,
  op: UserKeyOp,
  nowMs: number,
  base: string,
): UsersOutcome {
  const u = state.users.get(op.name);
  if (!u) return { reply: failBare(404, `Could not find user ${op.name}`) };
  const uri = `${base}/${u.username}`;
  const need = (perm: UserPermission): Reply | null => (userCan(state, ctx, u, perm) ? null : forbidden(perm));
  // The key the request was signed with, when the account changes its own keys.
  const self = ctx.requestor.kind === 'user' && ctx.requestor.name === u.username ? ctx.authKey : null;
  const saveKeys = (res: KeyResult): UsersOutcome =>
    res.keys
      ? { reply: res.reply, writes: [{ coll: 'users', id: u.username, doc: { ...u, keys: res.keys } }] }
      : { reply: res.reply };
  let denied: Reply | null;
  switch (op.type) {
    case 'list_user_keys':
      return { reply: need('read') ?? listKeys(u.keys, uri, nowMs) };
    case 'read_member_keys':
      return { reply: op.key === undefined ? listKeys(u.keys, uri, nowMs) : getKey(u.keys, op.key, u.username) };
    case 'get_user_key':
      return { reply: need('read') ?? getKey(u.keys, op.key, u.username) };
    case 'create_user_key':
      denied = need('update');
      if (denied) return { reply: denied };
      return saveKeys(createKey(u.keys, op.input, uri));
    case 'update_user_key':
      denied = need('update');
      if (denied) return { reply: denied };
      return saveKeys(updateKey(u.keys, op.key, op.input, u.username, uri, self));
    case 'delete_user_key':
      denied = need('update');
      if (denied) return { reply: denied };
      return saveKeys(deleteKey(u.keys, op.key, u.username, self));
  }
}
