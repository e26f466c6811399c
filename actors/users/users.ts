// The global users actor: user accounts, their keys, superusers and the server-admins group. It also keeps
// which organizations each user belongs to, an index the organizations feed (they own associations). With several
// processes on one store, each runs one: the changes each makes travel as hints (users-sync.ts) that the others
// apply from the store, and a periodic reload catches up with the hints that were lost.
import { dispatch, type Ref } from 'nact';
import { GLOBAL, SETUP_DONE, USERS } from '../../src/store/collections.js';
import type { Logger } from '../../src/lib/logger.js';
import { messageOf } from '../../src/lib/thrown.js';
import type { Store } from '../../src/store/store.js';
import type { PrincipalDirectory } from '../shared/principals.js';
import { fail, forbidden, internalError, ok, storeFailure, type Reply, type RequestContext } from '../shared/reply.js';
import { spawnSupervised, type CrashReporter } from '../shared/supervision.js';
import { handleUserOp, userJson, type UserOp } from './user-ops.js';
import { userCan, type UsersState, type UsersWrite } from './users-state.js';
import { loadAccounts, loadMembership, readAccounts, readMembership, readOrgInfo } from './users-store.js';
import {
  accountChanges,
  forgetOrg,
  hintFanOut,
  hintOfWrites,
  reconcile,
  setMembership,
  usersHintSchema,
  type HintBus,
  type UsersHint,
} from './users-sync.js';

export type UsersMsg =
  | { type: 'request'; ctx: RequestContext; op: UserOp; replyTo: Ref<Reply> }
  /** `readBy`: answer only if this requester may read the user (reference 3: read on org and on user). */
  | { type: 'render_user'; name: string; apiVersion: number; readBy?: RequestContext; replyTo: Ref<Reply> }
  | { type: 'exists'; name: string; replyTo: Ref<boolean> }
  /** The changes organizations served here made and stored; told to the other processes too. */
  | { type: 'association'; org: string; username: string; member: boolean }
  | { type: 'org_deleted'; org: string }
  | { type: 'org_info'; org: string; full_name: string; guid: string }
  /** An organization as stored, adopted by this process: nothing changed, so nothing is told. */
  | { type: 'org_adopted'; org: string; full_name: string; guid: string; members: string[] }
  /** Another process changed what this hint names: read again from the store and applied, never written. */
  | { type: 'hint'; hint: UsersHint }
  /** Accounts, server-admins and memberships read again from the store, for the hints that were lost. */
  /**
   * Reads accounts and memberships again. `take`: this process has just taken the global lease, so the stored
   * accounts replace what it held; otherwise (a periodic or reconnect reload) the holder of the global lease keeps
   * its own accounts, whose writes are its, and reads only the memberships.
   */
  | { type: 'reload'; take?: boolean; replyTo?: Ref<boolean> }
  /** The store lost what it held: every account, server-admins and the setup mark are written again. */
  | { type: 'write_back'; replyTo: Ref<boolean> }
  /** Writes made outside a request (first-start setup), persisted then applied. */
  | { type: 'apply'; writes: UsersWrite[]; replyTo: Ref<Reply> };

export interface UsersPorts {
  store: Store;
  now: () => number;
  /** Tells an organization served here that a user account is gone, so it drops the association. */
  userDeleted: (org: string, username: string) => void;
  /** Tells every organization served here that an account changed its name. */
  userRenamed: (from: string, to: string) => void;
  reporter: CrashReporter;
  /** Kept current with every account and server-admins change, for authentication. */
  principals: PrincipalDirectory;
  log: Logger;
  /** Where the other processes on the store hear of the changes made here; none with a single process. */
  bus?: HintBus;
  /** Whether this process holds the global lease, and so writes the accounts. */
  holdsAccounts?: () => boolean;
  /**
   * Whether the store holds everything written to it: false while it is written back after losing its data, when a
   * reload would forget accounts that are only in memory.
   */
  storeIsWhole?: () => Promise<boolean>;
}

/** What an account change makes this process do, whichever process made it: the fan-outs to its organizations. */
interface Fanned {
  deletedFrom?: { username: string; orgs: string[] } | undefined;
  renamed?: { from: string; to: string } | undefined;
}

export function spawnUsers(parent: Ref<unknown>, initial: UsersState, ports: UsersPorts): Ref<UsersMsg> {
  const { store, principals, log, bus } = ports;
  /** Memberships of accounts the last reload did not find (users-sync.ts, `reconcile`). */
  let suspects = new Set<string>();

  /** Applies writes the store holds, to the state and to authentication. */
  const applyStored = (state: UsersState, writes: readonly UsersWrite[]) => {
    for (const w of writes) {
      if (w.coll === 'server-admins') {
        state.serverAdmins = new Set(w.users);
        principals.setServerAdmins(state.serverAdmins);
      } else {
        if (w.doc === null) state.users.delete(w.id);
        else state.users.set(w.id, w.doc);
        principals.setUser(w.id, w.doc);
      }
    }
  };

  const persist = async (state: UsersState, writes: readonly UsersWrite[]) => {
    for (const w of writes) {
      if (w.coll === 'server-admins') await store.put(GLOBAL, 'server-admins', { users: w.users });
      else if (w.doc === null) await store.remove(USERS, w.id);
      else await store.put(USERS, w.id, w.doc);
    }
    applyStored(state, writes);
  };

  const fanOut = (state: UsersState, { deletedFrom, renamed }: Fanned) => {
    if (deletedFrom) {
      for (const org of deletedFrom.orgs) ports.userDeleted(org, deletedFrom.username);
      state.orgsOf.delete(deletedFrom.username);
    }
    if (renamed) {
      // Before the reply: the organizations see the new name before the client's next request.
      const orgs = state.orgsOf.get(renamed.from);
      state.orgsOf.delete(renamed.from);
      if (orgs) state.orgsOf.set(renamed.to, orgs);
      principals.renameMember(renamed.from, renamed.to);
      ports.userRenamed(renamed.from, renamed.to);
    }
  };

  const tell = (hint: UsersHint | undefined) => {
    if (hint) bus?.publish(hint);
  };

  const applyHint = async (state: UsersState, hint: UsersHint) => {
    switch (hint.type) {
      case 'users': {
        const stored = await readAccounts(store, hint.names);
        applyStored(state, accountChanges(state, stored));
        fanOut(state, hintFanOut(state, hint));
        break;
      }
      case 'association':
        setMembership(state, hint.org, hint.username, await readMembership(store, hint.org, hint.username));
        break;
      case 'org_info':
      case 'org_deleted': {
        const info = await readOrgInfo(store, hint.org);
        if (info) state.orgInfo.set(hint.org, info);
        else forgetOrg(state, hint.org);
        break;
      }
    }
  };

  const reload = async (state: UsersState, take: boolean) => {
    if (!take && ports.storeIsWhole && !(await ports.storeIsWhole())) return;
    const index = await loadMembership(store);
    if (!take && ports.holdsAccounts?.() === true) {
      state.orgsOf = index.orgsOf;
      state.orgInfo = index.orgInfo;
      return;
    }
    const stored = await loadAccounts(store);
    const out = reconcile(state, stored, index, suspects);
    applyStored(state, out.writes);
    state.orgsOf = out.index.orgsOf;
    state.orgInfo = out.index.orgInfo;
    suspects = out.suspects;
    for (const { org, username } of out.orphans) ports.userDeleted(org, username);
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
      case 'association':
        setMembership(state, msg.org, msg.username, msg.member);
        tell({ type: 'association', org: msg.org, username: msg.username });
        break;
      case 'org_deleted':
        forgetOrg(state, msg.org);
        tell({ type: 'org_deleted', org: msg.org });
        break;
      case 'org_info':
        state.orgInfo.set(msg.org, { full_name: msg.full_name, guid: msg.guid });
        tell({ type: 'org_info', org: msg.org });
        break;
      case 'org_adopted':
        state.orgInfo.set(msg.org, { full_name: msg.full_name, guid: msg.guid });
        for (const username of msg.members) setMembership(state, msg.org, username, true);
        break;
      case 'hint':
        try {
          await applyHint(state, msg.hint);
        } catch (error) {
          log.warn('a change another server made could not be read; the next reload reads it', {
            error: messageOf(error),
          });
        }
        break;
      case 'reload':
        try {
          await reload(state, msg.take === true);
          if (msg.replyTo) dispatch(msg.replyTo, true);
        } catch (error) {
          log.warn('reloading accounts and memberships failed; the next reload tries again', {
            error: messageOf(error),
          });
          if (msg.replyTo) dispatch(msg.replyTo, false);
        }
        break;
      case 'write_back':
        try {
          await store.apply([
            ...[...state.users].map(([id, doc]) => ({ collection: USERS, id, doc })),
            { collection: GLOBAL, id: 'server-admins', doc: { users: [...state.serverAdmins] } },
            { collection: GLOBAL, id: SETUP_DONE.id, doc: SETUP_DONE.doc },
          ]);
          dispatch(msg.replyTo, true);
        } catch (e) {
          log.error('writing the accounts back failed', { error: e });
          dispatch(msg.replyTo, false);
        }
        break;
      case 'apply':
        try {
          await persist(state, msg.writes);
          dispatch(msg.replyTo, ok(null));
        } catch (e) {
          dispatch(msg.replyTo, storeFailure(log, e));
          break;
        }
        tell(hintOfWrites(msg.writes));
        break;
      case 'request': {
        const out = handleUserOp(state, msg.ctx, msg.op, ports.now());
        try {
          if (out.writes) await persist(state, out.writes);
        } catch (e) {
          dispatch(msg.replyTo, storeFailure(log, e));
          break;
        }
        fanOut(state, out);
        tell(hintOfWrites(out.writes ?? [], out.deletedFrom?.username, out.renamed));
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
      case 'reload':
        if (msg.replyTo) dispatch(msg.replyTo, false);
        break;
      default:
        break; // a notice: nobody waits for it
    }
    return state;
  };
  return spawnSupervised(parent, { name: 'users', initial, receive, onCrash }, ports.reporter);
}

/**
 * How often every process reads accounts and memberships again, for a hint it missed. Seldom: hints are lost only
 * with the bus's connection, and a reconnection reloads at once; a reload costs a command per organization.
 */
export const RELOAD_MS = 300_000;

/**
 * Hands the users actor every hint the bus brings (checked here, at the boundary) and a reload after each
 * reconnect and at every `schedule` tick (default: every RELOAD_MS); resolves once listening. Returns the stop.
 */
export async function followHints(
  users: Ref<UsersMsg>,
  bus: HintBus,
  log: Logger,
  schedule: (tick: () => void) => () => void = everyReload,
): Promise<() => void> {
  await bus.listen({
    hint: (raw) => {
      const parsed = usersHintSchema.safeParse(raw);
      if (parsed.success) dispatch(users, { type: 'hint', hint: parsed.data });
      else log.debug('a hint that is none was dropped', { error: parsed.error });
    },
    reconnected: () => dispatch(users, { type: 'reload' }),
  });
  return schedule(() => dispatch(users, { type: 'reload' }));
}

function everyReload(tick: () => void): () => void {
  const timer = setInterval(tick, RELOAD_MS);
  timer.unref();
  return () => clearInterval(timer);
}
