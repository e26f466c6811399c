// The _acl endpoints of an organization's objects (spec 4.2; reference 5.1): reading and replacing one
// permission's entry. Both need grant on the object; a refusal names read (GET) or update (PUT) as the
// original does.
import type { Ace, Acl, Permission } from '../../../src/auth/acl.js';
import { PERMISSIONS } from '../../../src/auth/acl.js';
import { accessFor } from '../access.js';
import type { OrgState, OrgWrite } from '../org-state.js';
import type { OrgOutcome } from '../outcome.js';
import { fail, forbidden, ok, type RequestContext } from '../../shared/reply.js';

export type AclKind =
  'nodes' | 'roles' | 'environments' | 'data' | 'clients' | 'groups' | 'containers' | 'organization';

/** A PUT body's entry after HTTP validation: the `actors` form or the split `users`/`clients` form. */
export interface AceInput {
  actors: string[];
  groups: string[];
  users?: string[];
  clients?: string[];
}

export type AclOp =
  | { type: 'get_acl'; kind: AclKind; name: string; granular: boolean }
  | { type: 'put_acl'; kind: AclKind; name: string; perm: Permission; ace: AceInput };

export function handleAclOp(state: OrgState, ctx: RequestContext, op: AclOp): OrgOutcome {
  const target = locate(state, op.kind, op.name);
  if (!target) return { reply: fail(404, missingMessage(op.kind, op.name)) };
  if (!accessFor(state, ctx).can(target.acl, 'grant'))
    return { reply: forbidden(op.type === 'get_acl' ? 'read' : 'update') };
  if (op.type === 'get_acl') {
    return { reply: ok(Object.fromEntries(PERMISSIONS.map((p) => [p, aceJson(target.acl[p], op.granular)]))) };
  }
  const resolved = resolveAce(state, op.ace);
  if ('error' in resolved) return { reply: fail(resolved.status, resolved.error) };
  if (
    !ctx.requestor.superuser &&
    op.perm === 'grant' &&
    target.acl.grant.groups.includes('admins') &&
    !resolved.ace.groups.includes('admins')
  ) {
    return { reply: fail(403, 'Admin group cannot be removed from the Grant ACE') };
  }
  const acl: Acl = { ...target.acl, [op.perm]: resolved.ace };
  return { reply: ok({}), writes: [target.write(acl)] };
}

function aceJson(ace: Ace, granular: boolean): Record<string, string[]> {
  return granular
    ? { actors: [], users: ace.users, clients: ace.clients, groups: ace.groups }
    : { actors: [...ace.clients, ...ace.users], groups: ace.groups };
}

interface Target {
  acl: Acl;
  write: (acl: Acl) => OrgWrite;
}

function locate(state: OrgState, kind: AclKind, name: string): Target | undefined {
  switch (kind) {
    case 'organization':
      return { acl: state.org.acl, write: (acl) => ({ coll: 'org', id: state.org.name, doc: { ...state.org, acl } }) };
    case 'clients': {
      const d = state.clients.get(name);
      return d && { acl: d.acl, write: (acl) => ({ coll: 'clients', id: name, doc: { ...d, acl } }) };
    }
    case 'groups': {
      const d = state.groups.get(name);
      return d && { acl: d.acl, write: (acl) => ({ coll: 'groups', id: name, doc: { ...d, acl } }) };
    }
    case 'containers': {
      const d = state.containers.get(name);
      return d && { acl: d.acl, write: (acl) => ({ coll: 'containers', id: name, doc: { ...d, acl } }) };
    }
    default: {
      const d = state[kind].get(name);
      return d?.acl && { acl: d.acl, write: (acl) => ({ coll: kind, id: name, doc: { ...d, acl } }) };
    }
  }
}

function missingMessage(kind: AclKind, name: string): string {
  const words: Record<AclKind, string> = {
    nodes: 'node',
    roles: 'role',
    environments: 'environment',
    data: 'data bag',
    clients: 'client',
    groups: 'group',
    containers: 'container',
    organization: 'organization',
  };
  return `Cannot load ${words[kind]} ${name}`;
}

type Resolved = { ace: Ace } | { status: number; error: string };

/** Turns names into an entry, with the reference's errors for unknown and ambiguous names (reference 5.1). */
function resolveAce(state: OrgState, input: AceInput): Resolved {
  const scoped = [...input.actors, ...(input.users ?? []), ...(input.clients ?? [])].filter((n) => n.includes('::'));
  if (scoped.length > 0)
    return { status: 400, error: `Scoped actor names are not allowed in this context: '${scoped.join("', '")}'` };
  const isUser = (n: string) => state.members.has(n);
  const isClient = (n: string) => state.clients.has(n);
  const badGroups = input.groups.filter((g) => !state.groups.has(g));
  if (badGroups.length > 0)
    return { status: 400, error: `The group(s) '${badGroups.join("', '")}' do not exist in this organization.` };
  if (input.users !== undefined && input.clients !== undefined) {
    const badUsers = input.users.filter((u) => !isUser(u));
    if (badUsers.length > 0)
      return { status: 400, error: `The user(s) '${badUsers.join("', '")}' do not exist in this organization.` };
    const badClients = input.clients.filter((c) => !isClient(c));
    if (badClients.length > 0)
      return { status: 400, error: `The client(s) '${badClients.join("', '")}' do not exist in this organization.` };
    return { ace: { users: unique(input.users), clients: unique(input.clients), groups: unique(input.groups) } };
  }
  const both = input.actors.filter((n) => isUser(n) && isClient(n));
  if (both.length > 0) {
    return {
      status: 422,
      error: `The following actor(s) exist as both clients and users within this organization: '${both.join("', '")}'. To perform this update, supply separate 'clients' and 'users' fields in your request, and use an empty array for the value of 'actors'.`,
    };
  }
  const unknown = input.actors.filter((n) => !isUser(n) && !isClient(n));
  if (unknown.length > 0)
    return {
      status: 400,
      error: `The actor(s) '${unknown.join("', '")}' do not exist in this organization as clients or users.`,
    };
  return {
    ace: {
      users: unique(input.actors.filter(isUser)),
      clients: unique(input.actors.filter(isClient)),
      groups: unique(input.groups),
    },
  };
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}
