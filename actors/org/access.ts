// Authorization inside one organization: the requestor's groups are computed once per request, then every
// check is a lookup (spec 5.4). Also the URIs an organization's answers carry.
import { groupsOf, hasPermission, type Acl, type Permission } from '../../src/auth/acl.js';
import type { RequestContext } from '../shared/reply.js';
import type { OrgState } from './org-state.js';

export interface Access {
  can(acl: Acl | undefined, perm: Permission): boolean;
  /** Is the requestor, directly or through nested groups, in `group`? */
  inGroup(group: string): boolean;
  /** The container ACL check for list (read) and create. */
  canContainer(container: string, perm: Permission): boolean;
}

export function accessFor(state: OrgState, ctx: RequestContext): Access {
  const r = ctx.requestor;
  // A validator may register clients and nothing else (spec 5.3): it passes no ACL check here; the
  // client-creation path admits it explicitly.
  const memberOf = r.superuser || r.validator ? new Set<string>() : groupsOf(r, state.groups, state.groupIndex);
  const can = (acl: Acl | undefined, perm: Permission): boolean =>
    acl !== undefined && !r.validator && hasPermission(r, acl, perm, memberOf);
  return {
    can,
    inGroup: (group) => r.superuser || memberOf.has(group),
    canContainer: (container, perm) => can(state.containers.get(container)?.acl, perm),
  };
}

export function orgUri(ctx: RequestContext, state: OrgState): string {
  return `${ctx.baseUrl}/organizations/${state.org.name}`;
}
