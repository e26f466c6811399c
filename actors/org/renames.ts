// How a renamed or deleted user, client or group leaves every mention behind in an organization: group
// memberships and ACL entries hold names, so each rename or deletion rewrites the documents that name it.
import { renameInAcl, replaceName, type MemberList } from '../../src/auth/acl.js';
import type { GroupDoc } from '../shared/documents.js';
import type { OrgState, OrgWrite } from './org-state.js';

/**
 * Writes moving every group membership and ACL entry naming `from` to `to`, or dropping them when `to` is
 * null, in every document but `self` (the renamed or deleted document, which the caller writes). ACLs hold
 * names, so without this a rename loses its rights and the next holder of a freed name inherits them.
 */
export function renameWrites(
  state: OrgState,
  list: MemberList,
  from: string,
  to: string | null,
  self?: { coll: 'clients' | 'groups'; id: string },
): OrgWrite[] {
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
