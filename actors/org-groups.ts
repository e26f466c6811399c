// Groups and containers of one organization (reference 4.4, 4.5). Groups nest to any depth; a change that
// would close a cycle is refused. Also how a renamed or deleted actor or group leaves every mention behind.
import { emptyAcl, mergeAcl, ownerAcl, PERMISSIONS, wouldCycle, type Acl, type Group } from '../src/auth/acl.js';
import type { GroupDoc } from './docs.js';
import { accessFor, orgUri } from './org-access.js';
import type { OrgState, OrgWrite, Outcome } from './org-state.js';
import { fail, failBare, forbidden, ok, type RequestContext } from './reply.js';

export interface GroupMembers { users?: string[]; clients?: string[]; groups?: string[] }

export type GroupOp =
  | { type: 'list_groups' }
  | { type: 'create_group'; name: string }
  | { type: 'get_group'; name: string }
  | { type: 'update_group'; name: string; newName: string; members: GroupMembers }
  | { type: 'delete_group'; name: string }
  | { type: 'list_containers' }
  | { type: 'create_container'; name: string }
  | { type: 'get_container'; name: string }
  | { type: 'delete_container'; name: string };

export function handleGroupOp(state: OrgState, ctx: RequestContext, op: GroupOp): Outcome {
  const access = accessFor(state, ctx);
  const groupsUri = `${orgUri(ctx, state)}/groups`;
  const containersUri = `${orgUri(ctx, state)}/containers`;
  const creatorAcl = (container: string) => {
    const r = ctx.requestor;
    const creator = r.superuser ? emptyAcl() : ownerAcl(r.kind, r.name);
    return container === 'containers' ? creator : mergeAcl(creator, state.containers.get(container)?.acl ?? emptyAcl());
  };
  switch (op.type) {
    case 'list_groups':
      if (!access.canContainer('groups', 'read')) return { reply: forbidden('read') };
      return { reply: ok(Object.fromEntries([...state.groups.keys()].sort().map((n) => [n, `${groupsUri}/${n}`]))) };
    case 'create_group': {
      if (!access.canContainer('groups', 'create')) return { reply: forbidden('create') };
      if (state.groups.has(op.name)) return { reply: fail(409, 'Group already exists') };
      const doc: GroupDoc = { name: op.name, users: [], clients: [], groups: [], acl: creatorAcl('groups') };
      return { reply: ok({ uri: `${groupsUri}/${op.name}` }, 201, `${groupsUri}/${op.name}`), writes: [{ coll: 'groups', id: op.name, doc }] };
    }
    case 'get_group': {
      const g = state.groups.get(op.name);
      if (!g) return { reply: fail(404, `Cannot load group ${op.name}`) };
      if (!access.can(g.acl, 'read')) return { reply: forbidden('read') };
      return { reply: ok(groupJson(state, g)) };
    }
    case 'update_group':
      return updateGroup(state, ctx, op, groupsUri);
    case 'delete_group': {
      const g = state.groups.get(op.name);
      if (!g) return { reply: fail(404, `Cannot load group ${op.name}`) };
      if (!access.can(g.acl, 'delete')) return { reply: forbidden('delete') };
      const writes: OrgWrite[] = [{ coll: 'groups', id: g.name, doc: null }, ...renameWrites(state, 'groups', g.name, null, { coll: 'groups', id: g.name })];
      return { reply: ok(groupJson(state, g)), writes };
    }
    case 'list_containers':
      if (!access.canContainer('containers', 'read')) return { reply: forbidden('read') };
      return { reply: ok(Object.fromEntries([...state.containers.keys()].sort().map((n) => [n, `${containersUri}/${n}`]))) };
    case 'create_container': {
      if (!access.canContainer('containers', 'create')) return { reply: forbidden('create') };
      if (state.containers.has(op.name)) return { reply: fail(409, 'Container already exists') };
      // A new container holds only its creator (reference 4.5): container ACLs are not inherited.
      return {
        reply: ok({ uri: `${containersUri}/${op.name}` }, 201, `${containersUri}/${op.name}`),
        writes: [{ coll: 'containers', id: op.name, doc: { name: op.name, acl: creatorAcl('containers') } }],
      };
    }
    case 'get_container':
    case 'delete_container': {
      const c = state.containers.get(op.name);
      if (!c) return { reply: fail(404, `Cannot load container ${op.name}`) };
      const perm = op.type === 'get_container' ? 'read' : 'delete';
      if (!access.can(c.acl, perm)) return { reply: forbidden(perm) };
      const body = { containername: c.name, containerpath: c.name };
      return op.type === 'get_container' ? { reply: ok(body) } : { reply: ok(body), writes: [{ coll: 'containers', id: c.name, doc: null }] };
    }
  }
}

function updateGroup(state: OrgState, ctx: RequestContext, op: Extract<GroupOp, { type: 'update_group' }>, groupsUri: string): Outcome {
  const g = state.groups.get(op.name);
  if (!g) return { reply: fail(404, `Cannot load group ${op.name}`) };
  if (!accessFor(state, ctx).can(g.acl, 'update')) return { reply: forbidden('update') };
  if (op.newName !== op.name && state.groups.has(op.newName)) return { reply: failBare(409, 'Group already exists') };
  // A missing list keeps the current members of that kind; unknown names are ignored (reference 4.4).
  // A name already in the group is not unknown (the creating superuser is a member without association).
  const users = op.members.users === undefined ? g.users : op.members.users.filter((u) => state.members.has(u) || g.users.includes(u));
  const clients = op.members.clients === undefined ? g.clients : op.members.clients.filter((c) => state.clients.has(c));
  const nested = op.members.groups === undefined ? g.groups : op.members.groups.filter((n) => state.groups.has(n));
  const view = new Map<string, Group>(state.groups);
  view.set(g.name, { ...g, groups: [] });
  for (const child of nested) {
    if (child === g.name || wouldCycle(g.name, child, view)) return { reply: fail(400, `Adding group '${child}' to group '${g.name}' would create a cycle`) };
  }
  const doc: GroupDoc = { ...g, name: op.newName, users: unique(users), clients: unique(clients), groups: unique(nested) };
  const writes: OrgWrite[] = [{ coll: 'groups', id: doc.name, doc }];
  if (op.newName !== op.name) {
    doc.acl = renameInAcl(g.acl, 'groups', op.name, op.newName) ?? g.acl;
    writes.push({ coll: 'groups', id: op.name, doc: null }, ...renameWrites(state, 'groups', op.name, op.newName, { coll: 'groups', id: op.name }));
    return { reply: ok(groupJson(state, doc), 201, `${groupsUri}/${doc.name}`), writes };
  }
  return { reply: ok(groupJson(state, doc)), writes };
}

export function groupJson(state: OrgState, g: GroupDoc): Record<string, unknown> {
  return {
    actors: [...g.clients, ...g.users], users: g.users, clients: g.clients, groups: g.groups,
    orgname: state.org.name, name: g.name, groupname: g.name,
  };
}

/** Which list of memberships and ACL entries names the renamed or deleted one. */
export type MemberList = 'users' | 'clients' | 'groups';

/** `acl` with `from` replaced by `to` (dropped when `to` is null) in one list of every entry; null when absent. */
export function renameInAcl(acl: Acl, list: MemberList, from: string, to: string | null): Acl | null {
  if (!PERMISSIONS.some((p) => acl[p][list].includes(from))) return null;
  const out: Acl = { ...acl };
  for (const p of PERMISSIONS) out[p] = { ...acl[p], [list]: replaceName(acl[p][list], from, to) };
  return out;
}

/**
 * Writes moving every group membership and ACL entry naming `from` to `to`, or dropping them when `to` is
 * null, in every document but `self` (the renamed or deleted document, which the caller writes). ACLs hold
 * names, so without this a rename loses its rights and the next holder of a freed name inherits them.
 */
export function renameWrites(state: OrgState, list: MemberList, from: string, to: string | null, self?: { coll: 'clients' | 'groups'; id: string }): OrgWrite[] {
  const writes: OrgWrite[] = [];
  const isSelf = (coll: string, id: string) => self?.coll === coll && self.id === id;
  for (const g of state.groups.values()) {
    if (isSelf('groups', g.name)) continue;
    const acl = renameInAcl(g.acl, list, from, to);
    const member = g[list].includes(from);
    if (!acl && !member) continue;
    const doc: GroupDoc = { ...g, acl: acl ?? g.acl };
    if (member) doc[list] = replaceName(g[list], from, to);
    writes.push({ coll: 'groups', id: g.name, doc });
  }
  for (const c of state.clients.values()) {
    const acl = isSelf('clients', c.name) ? null : renameInAcl(c.acl, list, from, to);
    if (acl) writes.push({ coll: 'clients', id: c.name, doc: { ...c, acl } });
  }
  for (const c of state.containers.values()) {
    const acl = renameInAcl(c.acl, list, from, to);
    if (acl) writes.push({ coll: 'containers', id: c.name, doc: { ...c, acl } });
  }
  for (const coll of ['nodes', 'roles', 'environments', 'data', 'items'] as const) {
    for (const [id, doc] of state[coll]) {
      const acl = doc.acl && renameInAcl(doc.acl, list, from, to);
      if (acl) writes.push({ coll, id, doc: { ...doc, acl } });
    }
  }
  const orgAcl = renameInAcl(state.org.acl, list, from, to);
  if (orgAcl) writes.push({ coll: 'org', id: state.org.name, doc: { ...state.org, acl: orgAcl } });
  return writes;
}

function replaceName(names: readonly string[], from: string, to: string | null): string[] {
  return unique(names.flatMap((n) => (n !== from ? [n] : to === null ? [] : [to])));
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}
