// The authorization model: ACLs of five permissions, each granted to users, clients and groups; groups
// nest to any depth. The check is pure (spec 5.4): the actor's own entry, else any group it belongs to.

export const PERMISSIONS = ['create', 'read', 'update', 'delete', 'grant'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** One access-control entry. Users and clients are kept apart because an org may hold both with one name. */
export interface Ace {
  users: string[];
  clients: string[];
  groups: string[];
}
export type Acl = Record<Permission, Ace>;

export interface Group {
  name: string;
  users: string[];
  clients: string[];
  groups: string[];
}

/** Who sends a request, as authentication established it. */
export interface Requestor {
  kind: 'user' | 'client';
  name: string;
  /** Superusers pass every check. */
  superuser: boolean;
  /** A member of the global server-admins group. */
  serverAdmin: boolean;
  /** A client flagged as its organization's validator: it may register clients and nothing else (spec 5.3). */
  validator: boolean;
}

export function emptyAce(): Ace {
  return { users: [], clients: [], groups: [] };
}

export function emptyAcl(): Acl {
  return { create: emptyAce(), read: emptyAce(), update: emptyAce(), delete: emptyAce(), grant: emptyAce() };
}

/**
 * Which groups hold each user and client directly, kept in step with the groups as they change: the clients
 * group of a large organization lists every client, and scanning it on each request made a request cost the size
 * of the fleet.
 */
export class GroupIndex {
  private readonly direct = new Map<string, Set<string>>();

  /**
   * The group `name` changed from `before` to `after` (either absent when it was created or removed). When the
   * change is known to be `appendedClients` added to its clients, the lists are not compared.
   */
  update(name: string, before: Group | undefined, after: Group | undefined, appendedClients?: readonly string[]): void {
    for (const kind of ['users', 'clients'] as const) {
      const { added, removed } =
        appendedClients && before && after && isAppend(before, after, appendedClients)
          ? { added: kind === 'clients' ? appendedClients : [], removed: [] }
          : listChanges(before?.[kind] ?? [], after?.[kind] ?? []);
      for (const member of removed) {
        const key = memberKey(kind, member);
        const groups = this.direct.get(key);
        groups?.delete(name);
        if (groups?.size === 0) this.direct.delete(key);
      }
      for (const member of added) {
        const key = memberKey(kind, member);
        let groups = this.direct.get(key);
        if (!groups) this.direct.set(key, (groups = new Set()));
        groups.add(name);
      }
    }
  }

  /** The groups that list `requestor` themselves. */
  directGroups(requestor: Pick<Requestor, 'kind' | 'name'>): ReadonlySet<string> {
    return this.direct.get(memberKey(requestor.kind === 'user' ? 'users' : 'clients', requestor.name)) ?? NONE;
  }
}

const NONE: ReadonlySet<string> = new Set();

function memberKey(kind: 'users' | 'clients', name: string): string {
  return `${kind === 'users' ? 'u' : 'c'}\u0000${name}`;
}

/**
 * Is `after` plausibly `before` with `appended` added to its clients? Checked in constant time (the lengths, the
 * ends, the other lists unchanged), a guard against a wrong hint rather than a proof.
 */
export function isAppend(before: Group, after: Group, appended: readonly string[]): boolean {
  const n = before.clients.length;
  return (
    after.users === before.users &&
    after.groups === before.groups &&
    after.clients.length === n + appended.length &&
    (n === 0 || after.clients[n - 1] === before.clients[n - 1]) &&
    appended.every((name, i) => after.clients[n + i] === name)
  );
}

/**
 * Names that joined and left a member list. A list that grew or shrank at its end (a client created or deleted)
 * is compared element by element, without building a set of the whole list; a name listed twice stays while
 * either entry does.
 */
function listChanges(before: readonly string[], after: readonly string[]): { added: string[]; removed: string[] } {
  if (before === after) return { added: [], removed: [] };
  let same = 0;
  const shorter = Math.min(before.length, after.length);
  while (same < shorter && before[same] === after[same]) same += 1;
  if (same === before.length) return { added: after.slice(same), removed: [] };
  if (same === after.length) return { added: [], removed: before.slice(same).filter((n) => !after.includes(n)) };
  const was = new Set(before);
  const is = new Set(after);
  return { added: after.filter((n) => !was.has(n)), removed: before.filter((n) => !is.has(n)) };
}

/** Every group `requestor` belongs to, directly or through nested groups. */
export function groupsOf(
  requestor: Pick<Requestor, 'kind' | 'name'>,
  groups: ReadonlyMap<string, Group>,
  index: GroupIndex,
): Set<string> {
  const member = new Set(index.directGroups(requestor));
  // Walk upward: a group containing a group we belong to contains us too.
  let grew = member.size > 0;
  while (grew) {
    grew = false;
    for (const g of groups.values()) {
      if (!member.has(g.name) && g.groups.some((child) => member.has(child))) {
        member.add(g.name);
        grew = true;
      }
    }
  }
  return member;
}

export function hasPermission(
  requestor: Requestor,
  acl: Acl,
  perm: Permission,
  memberOf: ReadonlySet<string>,
): boolean {
  if (requestor.superuser) return true;
  const ace = acl[perm];
  const direct = requestor.kind === 'user' ? ace.users : ace.clients;
  if (direct.includes(requestor.name)) return true;
  return ace.groups.some((g) => memberOf.has(g));
}

/** Per-permission union, used when a new object takes its container's ACL (reference 5.2). */
export function mergeAcl(a: Acl, b: Acl): Acl {
  const out = emptyAcl();
  for (const p of PERMISSIONS) {
    out[p] = {
      users: union(a[p].users, b[p].users),
      clients: union(a[p].clients, b[p].clients),
      groups: union(a[p].groups, b[p].groups),
    };
  }
  return out;
}

/** An ACL granting all five permissions to one actor. */
export function ownerAcl(kind: 'user' | 'client', name: string): Acl {
  const acl = emptyAcl();
  for (const p of PERMISSIONS)
    acl[p] = kind === 'user' ? { users: [name], clients: [], groups: [] } : { users: [], clients: [name], groups: [] };
  return acl;
}

/** Would making `parent` contain `child` close a cycle? */
export function wouldCycle(parent: string, child: string, groups: ReadonlyMap<string, Group>): boolean {
  const seen = new Set<string>();
  const stack = [child];
  while (stack.length > 0) {
    const g = stack.pop() as string;
    if (g === parent) return true;
    if (seen.has(g)) continue;
    seen.add(g);
    for (const nested of groups.get(g)?.groups ?? []) stack.push(nested);
  }
  return false;
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}

/** Which list of memberships and ACL entries names a renamed or deleted actor or group. */
export type MemberList = 'users' | 'clients' | 'groups';

/** `names` with `from` replaced by `to` (dropped when `to` is null), without duplicates. */
export function replaceName(names: readonly string[], from: string, to: string | null): string[] {
  return [...new Set(names.flatMap((n) => (n !== from ? [n] : to === null ? [] : [to])))];
}

/** `acl` with `from` replaced by `to` (dropped when `to` is null) in one list of every entry; null when absent. */
export function renameInAcl(acl: Acl, list: MemberList, from: string, to: string | null): Acl | null {
  if (!PERMISSIONS.some((p) => acl[p][list].includes(from))) return null;
  const out: Acl = { ...acl };
  for (const p of PERMISSIONS) out[p] = { ...acl[p], [list]: replaceName(acl[p][list], from, to) };
  return out;
}
