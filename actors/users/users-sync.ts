// Keeping the users actor of every process on one store current: the hints the processes send each other (what
// changed, never the record), the port they travel by, and what the records read again from the store change in
// this process's users state. Pure: the actor reads the store and runs the effects.
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { UserDoc } from '../shared/documents.js';
import type { UsersState, UsersWrite } from './users-state.js';

/**
 * `users`: accounts written (their names; server-admins is read again with them), with the deletion or rename that
 * other processes fan out to the organizations they serve. The others say whose membership, or which
 * organization, changed.
 */
export const usersHintSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('users'),
    names: z.array(z.string()),
    deleted: z.string().optional(),
    renamed: z.object({ from: z.string(), to: z.string() }).optional(),
  }),
  z.object({ type: z.literal('association'), org: z.string(), username: z.string() }),
  z.object({ type: z.literal('org_info'), org: z.string() }),
  z.object({ type: z.literal('org_deleted'), org: z.string() }),
]);
export type UsersHint = z.infer<typeof usersHintSchema>;

/** The hint bus as the users actor sees it (src/cluster/bus.ts on Redis; none on the file store). */
export interface HintBus {
  /** Tells the other processes; never throws (a lost hint is made up for by their reloads). */
  publish(hint: UsersHint): void;
  /** Calls `hint` with every other process's hint, unchecked; resolves once listening. */
  listen(listener: { hint(raw: unknown): void; reconnected(): void }): Promise<void>;
}

/** Accounts and server-admins as the store holds them; null: no account of that name. */
export interface StoredAccounts {
  users: ReadonlyMap<string, UserDoc | null>;
  serverAdmins: readonly string[];
}

/** Memberships and organizations as the store holds them. */
export interface MembershipIndex {
  orgsOf: Map<string, Set<string>>;
  orgInfo: Map<string, { full_name: string; guid: string }>;
}

/** A membership, as a key of a set. */
type PairKey = string;
const pairKey = (org: string, username: string): PairKey => JSON.stringify([org, username]);

/** The writes that bring the state's accounts and server-admins to what the store holds: those that differ. */
export function accountChanges(state: UsersState, stored: StoredAccounts): UsersWrite[] {
  const writes: UsersWrite[] = [];
  for (const [id, doc] of stored.users) {
    const mine = state.users.get(id);
    if (doc === null ? mine !== undefined : !isDeepStrictEqual(mine, doc)) writes.push({ coll: 'users', id, doc });
  }
  const admins = [...new Set(stored.serverAdmins)].sort();
  if (!isDeepStrictEqual(admins, [...state.serverAdmins].sort())) writes.push({ coll: 'server-admins', users: admins });
  return writes;
}

/** What a users hint makes this process do besides applying the accounts read again: its own fan-outs. */
export function hintFanOut(
  state: UsersState,
  hint: Extract<UsersHint, { type: 'users' }>,
): { deletedFrom?: { username: string; orgs: string[] }; renamed?: { from: string; to: string } } {
  return {
    ...(hint.deleted === undefined
      ? {}
      : { deletedFrom: { username: hint.deleted, orgs: [...(state.orgsOf.get(hint.deleted) ?? [])] } }),
    ...(hint.renamed === undefined ? {} : { renamed: hint.renamed }),
  };
}

/** The users hint that tells the other processes of these writes, or undefined when nothing was written. */
export function hintOfWrites(
  writes: readonly UsersWrite[],
  deleted?: string,
  renamed?: { from: string; to: string },
): UsersHint | undefined {
  if (writes.length === 0) return undefined;
  const names = [...new Set(writes.flatMap((w) => (w.coll === 'users' ? [w.id] : [])))];
  return {
    type: 'users',
    names,
    ...(deleted === undefined ? {} : { deleted }),
    ...(renamed === undefined ? {} : { renamed }),
  };
}

/** Records, or forgets, that `username` belongs to `org`. */
export function setMembership(index: MembershipIndex, org: string, username: string, member: boolean): void {
  const orgs = index.orgsOf.get(username);
  if (member) {
    if (orgs) orgs.add(org);
    else index.orgsOf.set(username, new Set([org]));
  } else if (orgs) {
    orgs.delete(org);
    if (orgs.size === 0) index.orgsOf.delete(username);
  }
}

/** Forgets an organization that is gone, and every membership in it. */
export function forgetOrg(index: MembershipIndex, org: string): void {
  for (const [username, orgs] of index.orgsOf) {
    orgs.delete(org);
    if (orgs.size === 0) index.orgsOf.delete(username);
  }
  index.orgInfo.delete(org);
}

/** The index of every stored organization and its members. */
export function indexOf(
  orgs: ReadonlyMap<string, { full_name: string; guid: string }>,
  members: ReadonlyMap<string, readonly string[]>,
): MembershipIndex {
  const index: MembershipIndex = { orgsOf: new Map(), orgInfo: new Map() };
  for (const [org, { full_name, guid }] of orgs) {
    index.orgInfo.set(org, { full_name, guid });
    for (const username of members.get(org) ?? []) setMembership(index, org, username, true);
  }
  return index;
}

export interface Reconciled {
  /** Applied to the state and to authentication, as a persist of them would be. */
  writes: UsersWrite[];
  /** The state's new membership index. */
  index: MembershipIndex;
  /** Memberships of accounts gone from the store, to drop as on a deletion (where their organization is served). */
  orphans: Array<{ org: string; username: string }>;
  /** Memberships of accounts not stored, seen for the first time: orphans if the next reload sees them again. */
  suspects: Set<PairKey>;
}

/**
 * Brings the state to the store: accounts and server-admins (every stored account, and those held here no longer
 * stored), and the membership index (read before the accounts, so a membership made after the accounts were read
 * belongs to an account they hold). A membership whose account is not stored is dropped only if the previous
 * reload saw it too: a rename stores the new account before the organizations move the membership to it.
 */
export function reconcile(
  state: UsersState,
  stored: StoredAccounts,
  index: MembershipIndex,
  suspected: ReadonlySet<PairKey>,
): Reconciled {
  const users = new Map<string, UserDoc | null>(stored.users);
  for (const id of state.users.keys()) if (!users.has(id)) users.set(id, null);
  const writes = accountChanges(state, { users, serverAdmins: stored.serverAdmins });
  const orphans: Array<{ org: string; username: string }> = [];
  const suspects = new Set<PairKey>();
  for (const [username, orgs] of [...index.orgsOf]) {
    if ((users.get(username) ?? null) !== null) continue;
    for (const org of [...orgs]) {
      const key = pairKey(org, username);
      if (!suspected.has(key)) suspects.add(key);
      else {
        orphans.push({ org, username });
        setMembership(index, org, username, false);
      }
    }
  }
  return { writes, index, orphans, suspects };
}
