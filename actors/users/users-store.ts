// What the users actor reads from the store: every account and server-admins at a start or a reload, the accounts
// a hint names, and the membership index of every stored organization, whichever process serves it.
import { GLOBAL, orgCollection, ORGS, USERS } from '../../src/store/collections.js';
import type { Store } from '../../src/store/store.js';
import { memberDocSchema, orgDocSchema, parseDoc, serverAdminsDocSchema, userDocSchema } from '../shared/documents.js';
import type { UserDoc } from '../shared/documents.js';
import type { UsersState } from './users-state.js';
import { indexOf, type MembershipIndex, type StoredAccounts } from './users-sync.js';

/** Every stored account and server-admins; the membership index starts empty. */
export async function loadUsers(store: Store): Promise<UsersState> {
  const { users, serverAdmins } = await loadAccounts(store);
  const docs = new Map<string, UserDoc>();
  for (const [id, doc] of users) if (doc !== null) docs.set(id, doc);
  return { users: docs, serverAdmins: new Set(serverAdmins), orgsOf: new Map(), orgInfo: new Map() };
}

export async function loadAccounts(store: Store): Promise<StoredAccounts> {
  const users = new Map<string, UserDoc | null>();
  for (const [id, raw] of await store.load(USERS)) users.set(id, parseDoc(userDocSchema, raw, USERS, id));
  return { users, serverAdmins: await readServerAdmins(store) };
}

/** The named accounts (null for those not stored) and server-admins. */
export async function readAccounts(store: Store, names: readonly string[]): Promise<StoredAccounts> {
  const read = await Promise.all(
    names.map(async (id): Promise<[string, UserDoc | null]> => {
      const raw = await store.get(USERS, id);
      return [id, raw === undefined ? null : parseDoc(userDocSchema, raw, USERS, id)];
    }),
  );
  return { users: new Map(read), serverAdmins: await readServerAdmins(store) };
}

async function readServerAdmins(store: Store): Promise<string[]> {
  const raw = await store.get(GLOBAL, 'server-admins');
  return raw === undefined ? [] : parseDoc(serverAdminsDocSchema, raw, GLOBAL, 'server-admins').users;
}

/** Every stored organization and its members. */
export async function loadMembership(store: Store): Promise<MembershipIndex> {
  const orgs = new Map<string, { full_name: string; guid: string }>();
  for (const [id, raw] of await store.load(ORGS)) orgs.set(id, parseDoc(orgDocSchema, raw, ORGS, id));
  const members = new Map<string, string[]>();
  await Promise.all(
    [...orgs.keys()].map(async (org) => {
      const coll = orgCollection(org, 'members');
      const docs = await store.load(coll);
      members.set(
        org,
        [...docs].map(([id, raw]) => parseDoc(memberDocSchema, raw, coll, id).username),
      );
    }),
  );
  return indexOf(orgs, members);
}

/** Whether `username` is a member of `org` as stored. */
export async function readMembership(store: Store, org: string, username: string): Promise<boolean> {
  return (await store.get(orgCollection(org, 'members'), username)) !== undefined;
}

/** The organization's name and guid as stored, or undefined when it is gone. */
export async function readOrgInfo(store: Store, org: string): Promise<{ full_name: string; guid: string } | undefined> {
  const raw = await store.get(ORGS, org);
  if (raw === undefined) return undefined;
  const { full_name, guid } = parseDoc(orgDocSchema, raw, ORGS, org);
  return { full_name, guid };
}
