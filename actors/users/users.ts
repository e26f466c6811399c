// The global users actor: user accounts, their keys, superusers and the server-admins group. It also keeps
// which organizations each user belongs to, an index the organizations feed (they own associations). With several
// processes on one store, each runs one: the changes each makes travel as hints (users-sync.ts) that the others
// apply from the store, and a periodic reload catches up with the hints that were lost (users-catch-up.ts).
import { dispatch, type Ref } from 'nact';
import { GLOBAL, SETUP_DONE, USERS } from '../../src/store/collections.js';
import { messageOf } from '../../src/lib/thrown.js';
import { fail, forbidden, internalError, ok, storeFailure, type Reply, type RequestContext } from '../shared/reply.js';
import { spawnSupervised } from '../shared/supervision.js';
import { fanOut, persist } from './users-apply.js';
import { CatchUp } from './users-catch-up.js';
import type { UsersPorts } from './users-ports.js';
import { handleUserOp, userJson, type UserOp } from './user-ops.js';
import { userCan, type UsersState, type UsersWrite } from './users-state.js';
import { forgetOrg, hintOfWrites, setMembership, type UsersHint } from './users-sync.js';

export type UsersMsg =
  | { type: 'request'; ctx: RequestContext; op: UserOp; replyTo: Ref<Reply> }
  /** `readBy`: answer only if this requester may read the user (reference 3: read on org and on user). */
  | { type: 'render_user'; name: string; apiVersion: number; readBy?: RequestContext; replyTo: Ref<Reply> }
  | { type: 'exists'; name: string; replyTo: Ref<boolean> }
  /** The changes organizations served here made and stored; told to the other processes too. */
  | OrgNotice
  /** Another process changed what this hint names: read again from the store and applied, never written. */
  | { type: 'hint'; hint: UsersHint }
  /**
   * Reads accounts and memberships again, for the hints that were lost. `take`: this process has just taken the
   * global lease, so the stored accounts replace what it held; otherwise (a periodic or reconnect reload) the
   * holder of the global lease keeps its own accounts, whose writes are its, and reads only the memberships.
   */
  | { type: 'reload'; take?: boolean; replyTo?: Ref<boolean> }
  /** The store lost what it held: every account, server-admins and the setup mark are written again. */
  | { type: 'write_back'; replyTo: Ref<boolean> }
  /** Writes made outside a request (first-start setup), persisted then applied. */
  | { type: 'apply'; writes: UsersWrite[]; replyTo: Ref<Reply> };

/** What an organization served here tells of its memberships and itself. */
type OrgNotice =
  | { type: 'association'; org: string; username: string; member: boolean }
  | { type: 'org_deleted'; org: string }
  | { type: 'org_info'; org: string; full_name: string; guid: string }
  /** An organization as stored, adopted by this process: nothing changed, so nothing is told. */
  | { type: 'org_adopted'; org: string; full_name: string; guid: string; members: string[] };

export function spawnUsers(parent: Ref<unknown>, initial: UsersState, ports: UsersPorts): Ref<UsersMsg> {
  const { log } = ports;
  const catchUp = new CatchUp(ports);
  const tell = (hint: UsersHint | undefined) => {
    if (hint) ports.bus?.publish(hint);
  };

  const receive = async (state: UsersState, msg: UsersMsg): Promise<UsersState> => {
    switch (msg.type) {
      case 'exists':
        dispatch(msg.replyTo, state.users.has(msg.name));
        break;
      case 'render_user':
        dispatch(msg.replyTo, renderUser(state, msg));
        break;
      case 'association':
      case 'org_deleted':
      case 'org_info':
      case 'org_adopted':
        tell(noteOrg(state, msg));
        break;
      case 'hint':
        await catchUp.hint(state, msg.hint).catch((error: unknown) => {
          log.warn('a change another server made could not be read; the next reload reads it', {
            error: messageOf(error),
          });
        });
        break;
      case 'reload': {
        const done = await catchUp.reload(state, msg.take === true).then(
          () => true,
          (error: unknown) => {
            log.warn('reloading accounts and memberships failed; the next reload tries again', {
              error: messageOf(error),
            });
            return false;
          },
        );
        if (msg.replyTo) dispatch(msg.replyTo, done);
        break;
      }
      case 'write_back':
        dispatch(msg.replyTo, await writeBack(ports, state));
        break;
      case 'apply':
        try {
          await persist(ports, state, msg.writes);
          dispatch(msg.replyTo, ok(null));
        } catch (e) {
          dispatch(msg.replyTo, storeFailure(log, e));
          break;
        }
        tell(hintOfWrites(msg.writes));
        break;
      case 'request':
        await request(ports, state, msg, tell);
        break;
    }
    return state;
  };
  return spawnSupervised(parent, { name: 'users', initial, receive, onCrash }, ports.reporter);
}

/** A user as GET shows it, once the requester named in `readBy`, if any, may read it. */
function renderUser(state: UsersState, msg: Extract<UsersMsg, { type: 'render_user' }>): Reply {
  const u = state.users.get(msg.name);
  if (!u) return fail(404, `Could not find user ${msg.name}`);
  if (msg.readBy && !userCan(state, msg.readBy, u, 'read')) return forbidden('read');
  return ok(userJson(u, msg.apiVersion));
}

/** Applies what an organization served here told; returns the hint that tells the other processes, if any. */
function noteOrg(state: UsersState, msg: OrgNotice): UsersHint | undefined {
  switch (msg.type) {
    case 'association':
      setMembership(state, msg.org, msg.username, msg.member);
      return { type: 'association', org: msg.org, username: msg.username };
    case 'org_deleted':
      forgetOrg(state, msg.org);
      return { type: 'org_deleted', org: msg.org };
    case 'org_info':
      state.orgInfo.set(msg.org, { full_name: msg.full_name, guid: msg.guid });
      return { type: 'org_info', org: msg.org };
    case 'org_adopted':
      state.orgInfo.set(msg.org, { full_name: msg.full_name, guid: msg.guid });
      for (const username of msg.members) setMembership(state, msg.org, username, true);
      return undefined;
  }
}

/** A request's pure outcome, stored, applied, fanned out to the organizations and told, then answered. */
async function request(
  ports: UsersPorts,
  state: UsersState,
  msg: Extract<UsersMsg, { type: 'request' }>,
  tell: (hint: UsersHint | undefined) => void,
): Promise<void> {
  const out = handleUserOp(state, msg.ctx, msg.op, ports.now());
  try {
    if (out.writes) await persist(ports, state, out.writes);
  } catch (e) {
    dispatch(msg.replyTo, storeFailure(ports.log, e));
    return;
  }
  fanOut(ports, state, out);
  tell(hintOfWrites(out.writes ?? [], out.deletedFrom?.username, out.renamed));
  dispatch(msg.replyTo, out.reply);
}

/** Writes every account, server-admins and the setup mark again, for a store that lost them. */
async function writeBack(ports: UsersPorts, state: UsersState): Promise<boolean> {
  try {
    await ports.store.apply([
      ...[...state.users].map(([id, doc]) => ({ collection: USERS, id, doc })),
      { collection: GLOBAL, id: 'server-admins', doc: { users: [...state.serverAdmins] } },
      { collection: GLOBAL, id: SETUP_DONE.id, doc: SETUP_DONE.doc },
    ]);
    return true;
  } catch (e) {
    ports.log.error('writing the accounts back failed', { error: e });
    return false;
  }
}

/** Handlers are pure and writes apply only once stored, so the state before the throw is intact. */
function onCrash(state: UsersState, msg: UsersMsg): UsersState {
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
    case 'reload':
      if (msg.replyTo) dispatch(msg.replyTo, false);
      break;
    default:
      break; // a notice: nobody waits for it
  }
  return state;
}
