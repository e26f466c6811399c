// The global users actor: user accounts, their keys, superusers and the server-admins group. It also keeps
// which organizations each user belongs to, an index the organizations feed (they own associations).
import { dispatch, spawn, type Ref } from 'nact';
import type { Store } from '../src/store/store.js';
import { serverAdminsDocSchema, userDocSchema, type UserDoc } from './docs.js';
import { liveKeys } from './key-ops.js';
import { parseDoc } from './org-state.js';
import { fail, forbidden, ok, type Reply, type RequestContext } from './reply.js';
import { handleUserOp, userCan, userJson, type UserOp, type UsersState, type UsersWrite } from './user-ops.js';

export const USERS_COLLECTION = 'users';
export const GLOBAL_COLLECTION = 'global';

export interface UserPrincipal {
  keys: Array<{ name: string; pem: string }>;
  superuser: boolean;
  serverAdmin: boolean;
}

export type UsersMsg =
  | { type: 'principal'; name: string; replyTo: Ref<UserPrincipal | null> }
  | { type: 'request'; ctx: RequestContext; op: UserOp; replyTo: Ref<Reply> }
  /** `readBy`: answer only if this requester may read the user (reference 3: read on org and on user). */
  | { type: 'render_user'; name: string; apiVersion: number; readBy?: RequestContext; replyTo: Ref<Reply> }
  | { type: 'exists'; name: string; replyTo: Ref<boolean> }
  | { type: 'association'; org: string; username: string; member: boolean }
  | { type: 'org_deleted'; org: string }
  | { type: 'org_info'; org: string; full_name: string; guid: string }
  /** Writes made outside a request (first-start setup), persisted then applied. */
  | { type: 'apply'; writes: UsersWrite[]; replyTo: Ref<Reply> };

export interface UsersPorts {
  store: Store;
  now: () => number;
  /** Tells an organization that a user account is gone, so it drops the association. */
  userDeleted: (org: string, username: string) => void;
  /** Tells every organization that an account changed its name. */
  userRenamed: (from: string, to: string) => void;
}

export async function loadUsers(store: Store): Promise<UsersState> {
  const users = new Map<string, UserDoc>();
  for (const [id, raw] of await store.load(USERS_COLLECTION)) users.set(id, parseDoc(userDocSchema, raw, USERS_COLLECTION, id));
  const admins = await store.get(GLOBAL_COLLECTION, 'server-admins');
  const serverAdmins = new Set(admins === undefined ? [] : parseDoc(serverAdminsDocSchema, admins, GLOBAL_COLLECTION, 'server-admins').users);
  return { users, serverAdmins, orgsOf: new Map(), orgInfo: new Map() };
}

export function spawnUsers(parent: Ref<unknown>, initial: UsersState, ports: UsersPorts): Ref<UsersMsg> {
  const persist = async (state: UsersState, writes: readonly UsersWrite[]) => {
    for (const w of writes) {
      if (w.coll === 'server-admins') await ports.store.put(GLOBAL_COLLECTION, 'server-admins', { users: w.users });
      else if (w.doc === null) await ports.store.remove(USERS_COLLECTION, w.id);
      else await ports.store.put(USERS_COLLECTION, w.id, w.doc);
    }
    for (const w of writes) {
      if (w.coll === 'server-admins') state.serverAdmins = new Set(w.users);
      else if (w.doc === null) state.users.delete(w.id);
      else state.users.set(w.id, w.doc);
    }
  };

  return spawn(parent as Ref<never>, async (state: UsersState, msg: UsersMsg) => {
    switch (msg.type) {
      case 'principal': {
        const u = state.users.get(msg.name);
        dispatch(msg.replyTo, u ? { keys: liveKeys(u.keys, ports.now()), superuser: u.superuser, serverAdmin: state.serverAdmins.has(u.username) } : null);
        break;
      }
      case 'exists':
        dispatch(msg.replyTo, state.users.has(msg.name));
        break;
      case 'render_user': {
        const u = state.users.get(msg.name);
        if (!u) dispatch(msg.replyTo, fail(404, `Could not find user ${msg.name}`));
        else if (msg.readBy && !userCan(state, msg.readBy, u, 'read')) dispatch(msg.replyTo, forbidden('read'));
        else dispatch(msg.replyTo, ok(userJson(u, msg.apiVersion)));
        break;
      }
      case 'association': {
        const orgs = state.orgsOf.get(msg.username) ?? new Set<string>();
        if (msg.member) orgs.add(msg.org);
        else orgs.delete(msg.org);
        state.orgsOf.set(msg.username, orgs);
        break;
      }
      case 'org_deleted':
        for (const orgs of state.orgsOf.values()) orgs.delete(msg.org);
        state.orgInfo.delete(msg.org);
        break;
      case 'org_info':
        state.orgInfo.set(msg.org, { full_name: msg.full_name, guid: msg.guid });
        break;
      case 'apply':
        try {
          await persist(state, msg.writes);
          dispatch(msg.replyTo, ok(null));
        } catch (e) {
          dispatch(msg.replyTo, storeFailure(e));
        }
        break;
      case 'request': {
        const out = handleUserOp(state, msg.ctx, msg.op, ports.now());
        try {
          if (out.writes) await persist(state, out.writes);
        } catch (e) {
          dispatch(msg.replyTo, storeFailure(e));
          break;
        }
        if (out.deletedFrom) {
          for (const org of out.deletedFrom.orgs) ports.userDeleted(org, out.deletedFrom.username);
          state.orgsOf.delete(out.deletedFrom.username);
        }
        if (out.renamed) {
          // Before the reply: the organizations see the new name before the client's next request.
          const orgs = state.orgsOf.get(out.renamed.from);
          state.orgsOf.delete(out.renamed.from);
          if (orgs) state.orgsOf.set(out.renamed.to, orgs);
          ports.userRenamed(out.renamed.from, out.renamed.to);
        }
        dispatch(msg.replyTo, out.reply);
        break;
      }
    }
    return state;
  }, 'users', { initialState: initial });
}

export function storeFailure(e: unknown): Reply {
  console.error(`store write failed: ${e instanceof Error ? e.message : String(e)}`);
  return fail(503, 'The data store is unavailable; nothing was changed. Try again.');
}
