// The default permissions of a new organization, exactly the tables of spec section 5 (with the
// reference's 5.4 for the cells the spec leaves open: the containers and groups containers).
import { emptyAcl, type Acl, type Permission } from './acl.js';

export const CONTAINERS = [
  'clients',
  'containers',
  'cookbooks',
  'cookbook_artifacts',
  'data',
  'environments',
  'groups',
  'nodes',
  'policies',
  'policy_groups',
  'roles',
  'sandboxes',
] as const;
export type ContainerName = (typeof CONTAINERS)[number];

export const DEFAULT_GROUPS = ['admins', 'billing_admins', 'clients', 'users', 'public_key_read_access'] as const;

const CRUD: Permission[] = ['create', 'read', 'update', 'delete'];

/** Spec 5, "users group" table; `organization` is the org object itself. */
const USERS_GROUP: Record<ContainerName | 'organization', Permission[]> = {
  clients: ['read', 'delete'],
  containers: ['read'],
  groups: ['read'],
  cookbooks: CRUD,
  cookbook_artifacts: CRUD,
  data: CRUD,
  environments: CRUD,
  nodes: CRUD,
  policies: CRUD,
  policy_groups: CRUD,
  roles: CRUD,
  sandboxes: ['create'],
  organization: ['read'],
};

/** Spec 5, "clients group" table. */
const CLIENTS_GROUP: Record<ContainerName | 'organization', Permission[]> = {
  clients: [],
  containers: [],
  groups: [],
  sandboxes: [],
  cookbooks: ['read'],
  cookbook_artifacts: ['read'],
  data: ['read'],
  environments: ['read'],
  policies: ['read'],
  policy_groups: ['read'],
  roles: ['read'],
  nodes: ['create', 'read'],
  organization: ['read'],
};

/** admins hold every permission on every object type; users and clients as the tables say. */
export function defaultContainerAcl(name: ContainerName | 'organization'): Acl {
  const acl = emptyAcl();
  for (const p of Object.keys(acl) as Permission[]) {
    acl[p].groups = ['admins'];
    if (USERS_GROUP[name].includes(p)) acl[p].groups.push('users');
    if (CLIENTS_GROUP[name].includes(p)) acl[p].groups.push('clients');
  }
  return acl;
}

/** ACLs of the default groups themselves (spec 5: admins on admins, clients, users; billing_admins on itself). */
export function defaultGroupAcl(group: string): Acl {
  const acl = emptyAcl();
  if (group === 'billing_admins') {
    acl.read.groups = ['billing_admins'];
    acl.update.groups = ['billing_admins'];
    return acl;
  }
  const perms: Permission[] =
    group === 'public_key_read_access' ? ['read', 'update'] : ['create', 'read', 'update', 'delete', 'grant'];
  for (const p of perms) acl[p].groups = ['admins'];
  return acl;
}
