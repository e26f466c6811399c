// The global users actor: user accounts, their keys, superusers and the server-admins group. It also keeps
// which organizations each user belongs to, an index the organizations feed (they own associations).
import { dispatch, type Ref } from 'nact';
import { GLOBAL, SETUP_DONE, USERS } from '../../src/store/collections.js';
import type { Logger } from '../../src/lib/logger.js';
import type { Store } from '../../src/store/store.js';
import { parseDoc, serverAdminsDocSchema, userDocSchema, type UserDoc } from '../shared/documents.js';
import type { PrincipalDirectory } from '../shared/principals.js';
import { fail, forbidden, internalError, ok, storeFailure, type Reply, type RequestContext } from '../shared/reply.js';
import { spawnSupervised, type CrashReporter } from '../shared/supervision.js';
import { handleUserOp, userJson, type UserOp } from './user-ops.js';
import { userCan, type UsersState, type UsersWrite } from './users-state.js';

export type UsersMsg =
  | { type: 'request'; ctx: RequestContext; op: UserOp; replyTo: Ref<Reply> }
  /** `readBy`: answer only if this requester may read the user (reference 3: read on org and on user). */
  | { type: 'render_user'; name: string; apiVersion: number; readBy?: RequestContext; replyTo: Ref<Reply> }
  | { type: 'exists'; name: string; replyTo: Ref<boolean> }
  | { type: 'association'; org: string; username: string; member: boolean }
  | { type: 'org_deleted'; org: string }
  | { type: 'org_info'; org: string; full_name: string; guid: string }
  /** The store lost what it held: every account, server-admins and the setup mark are written again. */
  | { type: 'write_back'; replyTo: Ref<boolean> }
  /** Writes made outside a request (first-start setup), persisted then applied. */
  | { type: 'apply'; writes: UsersWrite[]; replyTo: Ref<Reply> };

export interface UsersPorts {
  store: Store;
  now: () => number;
  /** Tells an organization that a user account is gone, so it drops the association. */
  userDeleted: (org: string, username: string) => void;
  /** Tells every organization that an account changed its name. */
  userRenamed: (from: string, to: string) => void;
  reporter: CrashReporter;
  /** Kept current with every account and server-admins change, for authentication. */
  principals: PrincipalDirectory;
  log: Logger;
}

export async function loadUsers(store: Store): Promise<UsersState> {
  const users = new Map<string, UserDoc>();
  for (const [id, raw] of await store.load(USERS)) users.set(id, parseDoc(userDocSchema, raw, USERS, id));
  const admins = await store.get(GLOBAL, 'server-admins');
  const serverAdmins = new Set(
    admins === undefined ? [] : parseDoc(serverAdminsDocSchema, admins, GLOBAL, 'server-admins').users,
  );
  return { users, serverAdmins, orgsOf: new Map(), orgInfo: new Map() };
}

export function spawnUsers(parent: Ref<unknown>, initial: UsersState, ports: UsersPorts): Ref<UsersMsg> {
  const persist = async (state: UsersState, writes: readonly UsersWrite[]) => {
    for (const w of writes) {
      if (w.coll === 'server-admins') await ports.store.put(GLOBAL, 'server-admins', { users: w.users });
      else if (w.doc === null) await ports.store.remove(USERS, w.id);
      else await ports.store.put(USERS, w.id, w.doc);
    }
    for (const w of writes) {
      if (w.coll === 'server-admins') {
        state.serverAdmins = new Set(w.users);
        ports.principals.setServerAdmins(state.serverAdmins);
      } else {
        if (w.doc === null) state.users.delete(w.id);
        else state.users.set(w.id, w.doc);
        ports.principals.setUser(w.id, w.doc);
      }
    }
  };

  const receive = async (state: UsersState, msg: UsersMsg): Promise<UsersState> => {
    switch (msg.type) {
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
      case 'write_back':
        try {
          await ports.store.apply([
            ...[...state.users].map(([id, doc]) => ({ collection: USERS, id, doc })),
            { collection: GLOBAL, id: 'server-admins', doc: { users: [...state.serverAdmins] } },
            { collection: GLOBAL, id: SETUP_DONE.id, doc: SETUP_DONE.doc },
          ]);
          dispatch(msg.replyTo, true);
        } catch (e) {
          ports.log.error('writing the accounts back failed', { error: e });
          dispatch(msg.replyTo, false);
        }
        break;
      case 'apply':
        try {
          await persist(state, msg.writes);
          dispatch(msg.replyTo, ok(null));
        } catch (e) {
          dispatch(msg.replyTo, storeFailure(ports.log, e));
        }
        break;
      case 'request': {
        const out = handleUserOp(state, msg.ctx, msg.op, ports.now());
        try {
          if (out.writes) await persist(state, out.writes);
        } catch (e) {
          dispatch(msg.replyTo, storeFailure(ports.log, e));
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
          ports.principals.renameMember(out.renamed.from, out.renamed.to);
          ports.userRenamed(out.renamed.from, out.renamed.to);
        }
        dispatch(msg.replyTo, out.reply);
        break;
      }
    }
    return state;
  };
  // Handlers are pure and writes apply only once stored, so the state before the throw is intact.
  const onCrash = (state: UsersState, msg: UsersMsg): UsersState => {
    switch (msg.type) {
      case 'request':
      case 'render_user':
      case 'apply':
        dispatch(msg.replyTo, internalError());
        break;
      case 'exists':
      case 'write_back':
        dispatch(msg.replyTo, false);
        break;
      default:
        break; // a notice: nobody waits for it
    }
    return state;
  };
  return spawnSupervised(parent, { name: 'users', initial, receive, onCrash }, ports.reporter);
}
