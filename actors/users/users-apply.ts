// What an account change does in this process, whichever process made it: the state and authentication's
// directory take the writes the store holds, and the organizations served here hear of a deletion or a rename.
// The users actor runs these after a request and after a hint; the store is written first, so nothing here is
// applied that is not stored.
import { GLOBAL, USERS } from '../../src/store/collections.js';
import type { UsersState, UsersWrite } from './users-state.js';
import type { UsersPorts } from './users-ports.js';

/** What an account change makes this process do, whichever process made it: the fan-outs to its organizations. */
export interface Fanned {
  deletedFrom?: { username: string; orgs: string[] } | undefined;
  renamed?: { from: string; to: string } | undefined;
}

/** Applies writes the store holds, to the state and to authentication. */
export function applyStored(ports: Pick<UsersPorts, 'principals'>, state: UsersState, writes: readonly UsersWrite[]) {
  const { principals } = ports;
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
}

/** Stores the writes, then applies them. */
export async function persist(ports: UsersPorts, state: UsersState, writes: readonly UsersWrite[]): Promise<void> {
  for (const w of writes) {
    if (w.coll === 'server-admins') await ports.store.put(GLOBAL, 'server-admins', { users: w.users });
    else if (w.doc === null) await ports.store.remove(USERS, w.id);
    else await ports.store.put(USERS, w.id, w.doc);
  }
  applyStored(ports, state, writes);
}

/** Tells the organizations of a deleted account, and every organization of a renamed one. */
export function fanOut(ports: UsersPorts, state: UsersState, { deletedFrom, renamed }: Fanned): void {
  if (deletedFrom) {
    for (const org of deletedFrom.orgs) ports.userDeleted(org, deletedFrom.username);
    state.orgsOf.delete(deletedFrom.username);
  }
  if (renamed) {
    // Before the reply: the organizations see the new name before the client's next request.
    const orgs = state.orgsOf.get(renamed.from);
    state.orgsOf.delete(renamed.from);
    if (orgs) state.orgsOf.set(renamed.to, orgs);
    ports.principals.renameMember(renamed.from, renamed.to);
    ports.userRenamed(renamed.from, renamed.to);
  }
}
