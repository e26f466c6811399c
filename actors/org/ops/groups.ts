// Groups and containers of one organization (reference 4.4, 4.5). Groups nest to any depth; a change that
// would close a cycle is refused.
import { emptyAcl, mergeAcl, ownerAcl, renameInAcl, wouldCycle, type Group } from '../../../src/auth/acl.js';
import type { GroupDoc } from '../../shared/documents.js';
import { accessFor, orgUri } from '../access.js';
import type { OrgState, OrgWrite } from '../org-state.js';
import type { OrgOutcome } from '../outcome.js';
import { renameWrites } from '../renames.js';
import { fail, failBare, forbidden, ok, type RequestContext } from '../../shared/reply.js';

export interface GroupMembers {
  users?: string[];
  clients?: string[];
  groups?: string[];
}

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

export function handleGroupOp(state: OrgState, ctx: RequestContext, op: GroupOp): OrgOutcome {
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
      return {
        reply: ok({ uri: `${groupsUri}/${op.name}` }, 201, `${groupsUri}/${op.name}`),
        writes: [{ coll: 'groups', id: op.name, doc }],
      };
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
      const writes: OrgWrite[] = [
        { coll: 'groups', id: g.name, doc: null },
        ...renameWrites(state, 'groups', g.name, null, { coll: 'groups', id: g.name }),
      ];
      return { reply: ok(groupJson(state, g)), writes };
    }
    case 'list_containers':
      if (!access.canContainer('containers', 'read')) return { reply: forbidden('read') };
      return {
        reply: ok(Object.fromEntries([...state.containers.keys()].sort().map((n) => [n, `${containersUri}/${n}`]))),
      };
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
      return op.type === 'get_container'
        ? { reply: ok(body) }
        : { reply: ok(body), writes: [{ coll: 'containers', id: c.name, doc: null }] };
    }
  }
}

function updateGroup(
  state: OrgState,
  ctx: RequestContext,
  op: Extract<GroupOp, { type: 'update_group' }>,
  groupsUri: string,
): OrgOutcome {
  const g = state.groups.get(op.name);
  if (!g) return { reply: fail(404, `Cannot load group ${op.name}`) };
  if (!accessFor(state, ctx).can(g.acl, 'update')) return { reply: forbidden('update') };
  if (op.newName !== op.name && state.groups.has(op.newName)) return { reply: failBare(409, 'Group already exists') };
  // A missing list keeps the current members of that kind; unknown names are ignored (reference 4.4).
  // A name already in the group is not unknown (the creating superuser is a member without association).
  const users =
    op.members.users === undefined
      ? g.users
      : op.members.users.filter((u) => state.members.has(u) || g.users.includes(u));
  const clients = op.members.clients === undefined ? g.clients : op.members.clients.filter((c) => state.clients.has(c));
  const nested = op.members.groups === undefined ? g.groups : op.members.groups.filter((n) => state.groups.has(n));
  const view = new Map<string, Group>(state.groups);
  view.set(g.name, { ...g, groups: [] });
  for (const child of nested) {
    if (child === g.name || wouldCycle(g.name, child, view))
      return { reply: fail(400, `Adding group '${child}' to group '${g.name}' would create a cycle`) };
  }
  const doc: GroupDoc = {
    ...g,
    name: op.newName,
    users: unique(users),
    clients: unique(clients),
    groups: unique(nested),
  };
  const writes: OrgWrite[] = [{ coll: 'groups', id: doc.name, doc }];
  if (op.newName !== op.name) {
    doc.acl = renameInAcl(g.acl, 'groups', op.name, op.newName) ?? g.acl;
    writes.push(
      { coll: 'groups', id: op.name, doc: null },
      ...renameWrites(state, 'groups', op.name, op.newName, { coll: 'groups', id: op.name }),
    );
    return { reply: ok(groupJson(state, doc), 201, `${groupsUri}/${doc.name}`), writes };
  }
  return { reply: ok(groupJson(state, doc)), writes };
}

export function groupJson(state: OrgState, g: GroupDoc): Record<string, unknown> {
  return {
    actors: [...g.clients, ...g.users],
    users: g.users,
    clients: g.clients,
    groups: g.groups,
    orgname: state.org.name,
    name: g.name,
    groupname: g.name,
  };
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}
