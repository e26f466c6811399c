// What a new organization holds (reference 3, 5.4; spec 2.2 and 5): its containers, default groups with
// their members and ACLs, and its validator client.
import { emptyAcl } from '../../src/auth/acl.js';
import { CONTAINERS, DEFAULT_GROUPS, defaultContainerAcl, defaultGroupAcl } from '../../src/auth/default-acls.js';
import { newGuid } from '../../src/lib/ids.js';
import type { OrgDoc } from '../shared/documents.js';
import type { OrgWrite } from './org-state.js';

export function validatorName(org: string): string {
  return `${org}-validator`;
}

/** `creator`: the user creating the organization, put in its admins and users groups (reference 3). */
export function newOrgWrites(
  name: string,
  fullName: string,
  validatorPublicKey: string,
  nowMs: number,
  creator: string | null = null,
): OrgWrite[] {
  const org: OrgDoc = {
    name,
    full_name: fullName,
    guid: newGuid(),
    acl: defaultContainerAcl('organization'),
    created_at: nowMs,
  };
  const writes: OrgWrite[] = [{ coll: 'org', id: name, doc: org }];
  for (const c of CONTAINERS) writes.push({ coll: 'containers', id: c, doc: { name: c, acl: defaultContainerAcl(c) } });
  for (const g of DEFAULT_GROUPS) {
    // public_key_read_access lets every user and client of the organization read keys (spec 4.3, 5).
    const groups = g === 'public_key_read_access' ? ['users', 'clients'] : [];
    const users = creator !== null && (g === 'admins' || g === 'users') ? [creator] : [];
    writes.push({ coll: 'groups', id: g, doc: { name: g, users, clients: [], groups, acl: defaultGroupAcl(g) } });
  }
  writes.push({
    coll: 'environments',
    id: '_default',
    doc: {
      name: '_default',
      body: {
        name: '_default',
        description: 'The default environment',
        cookbook_versions: {},
        json_class: 'Chef::Environment',
        chef_type: 'environment',
        default_attributes: {},
        override_attributes: {},
      },
      acl: defaultContainerAcl('environments'),
    },
  });
  // The validator takes the clients container's ACL but joins no group: it may register clients and
  // nothing else (spec 5.3).
  writes.push({
    coll: 'clients',
    id: validatorName(name),
    doc: {
      name: validatorName(name),
      validator: true,
      keys: { default: { public_key: validatorPublicKey, expiration_date: 'infinity' } },
      acl: { ...emptyAcl(), ...defaultContainerAcl('clients') },
    },
  });
  return writes;
}
