// Spec section 5, default permissions, cell by cell through the API: a user in `users`, a client in
// `clients`, and a user in `admins` each try create, read, update and delete on every object type that
// has endpoints; types without endpoints are checked through their container's ACL.
import t from 'tap';
import type { ApiClient } from '../../src/auth/api-client.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ORG = '/organizations/default';
type Perm = 'create' | 'read' | 'update' | 'delete';
type Row = Record<Perm, boolean>;
const row = (create: boolean, read: boolean, update: boolean, del: boolean): Row => ({
  create,
  read,
  update,
  delete: del,
});

// Spec 5 tables (columns reordered to create, read, update, delete).
const USERS: Record<string, Row> = {
  clients: row(false, true, false, true),
  data: row(true, true, true, true),
  environments: row(true, true, true, true),
  nodes: row(true, true, true, true),
  roles: row(true, true, true, true),
  organization: row(false, true, false, false),
};
const CLIENTS: Record<string, Row> = {
  clients: row(false, false, false, false),
  data: row(false, true, false, false),
  environments: row(false, true, false, false),
  nodes: row(true, true, false, false),
  roles: row(false, true, false, false),
  organization: row(false, true, false, false),
};
const ADMINS: Record<string, Row> = Object.fromEntries(Object.keys(USERS).map((k) => [k, row(true, true, true, true)]));

let counter = 0;
const fresh = (kind: string) => `${kind.replace(/s$/, '')}-${++counter}`;

function body(kind: string, name: string): Record<string, unknown> {
  return kind === 'data' ? { name } : { name };
}

/** Creates an object as pivotal, so the caller's rights come from the container alone. */
async function seed(s: TestServer, kind: string): Promise<string> {
  const name = fresh(kind);
  const res = await s.pivotal.request('POST', `${ORG}/${kind}`, kind === 'clients' ? { name } : body(kind, name));
  if (res.status !== 201) throw new Error(`seed ${kind}: ${res.status} ${JSON.stringify(res.body)}`);
  return name;
}

async function attempt(s: TestServer, who: ApiClient, kind: string, perm: Perm): Promise<number> {
  if (kind === 'organization') {
    if (perm === 'read') return (await who.request('GET', ORG)).status;
    if (perm === 'update') return (await who.request('PUT', ORG, { name: 'default', full_name: 'Renamed' })).status;
    if (perm === 'delete') return (await who.request('DELETE', ORG)).status;
    return (await who.request('POST', '/organizations', { name: fresh('org'), full_name: 'X' })).status;
  }
  if (perm === 'create') {
    const name = fresh(kind);
    return (await who.request('POST', `${ORG}/${kind}`, kind === 'clients' ? { name } : body(kind, name))).status;
  }
  const name = await seed(s, kind);
  const path = `${ORG}/${kind}/${name}`;
  if (perm === 'read') return (await who.request('GET', kind === 'data' ? `${ORG}/data/${name}` : path)).status;
  if (perm === 'delete') return (await who.request('DELETE', path)).status;
  if (kind === 'data') {
    // A data bag is updated through its items.
    return (await who.request('POST', `${ORG}/data/${name}`, { id: 'item' })).status;
  }
  return (await who.request('PUT', path, kind === 'clients' ? { name } : body(kind, name))).status;
}

t.test('default permissions of the users, clients and admins groups', async (t) => {
  const s = await startTestServer(t, 'file');
  const alice = await s.pivotal.request('POST', '/users', {
    username: 'alice',
    email: 'alice@example.com',
    display_name: 'Alice',
    password: 'secret123',
    create_key: true,
  });
  t.equal(alice.status, 201);
  t.equal((await s.pivotal.request('POST', `${ORG}/users`, { username: 'alice' })).status, 201);
  const aliceKey = (alice.body as { chef_key: { private_key: string } }).chef_key.private_key;
  const client = await s.admin.request('POST', `${ORG}/clients`, { name: 'worker', create_key: true });
  const clientKey = (client.body as { chef_key: { private_key: string } }).chef_key.private_key;
  const members: Array<[string, ApiClient, Record<string, Row>]> = [
    ['users', s.as('alice', aliceKey), USERS],
    ['clients', s.as('worker', clientKey), CLIENTS],
    ['admins', s.admin, ADMINS],
  ];
  for (const [group, who, table] of members) {
    for (const [kind, cells] of Object.entries(table)) {
      for (const perm of ['create', 'read', 'update', 'delete'] as const) {
        if (kind === 'organization' && (perm === 'delete' || perm === 'create')) {
          // Deleting the organization or creating another would end the test; creation is for superusers.
          // Clients are not principals on global paths at all (401); users lack the right (403).
          if (perm === 'create')
            t.equal(
              await attempt(s, who, kind, perm),
              group === 'clients' ? 401 : 403,
              `${group}: create organization refused`,
            );
          continue;
        }
        const status = await attempt(s, who, kind, perm);
        const allowed = status < 300;
        t.equal(allowed, cells[perm], `${group} ${perm} ${kind}: ${status}`);
        if (!allowed) t.equal(status, 403, `${group} ${perm} ${kind} refused with 403`);
      }
    }
  }
  t.equal((await s.as('alice', aliceKey).request('DELETE', ORG)).status, 403, 'users cannot delete the organization');
  t.equal(
    (await s.as('worker', clientKey).request('DELETE', ORG)).status,
    403,
    'clients cannot delete the organization',
  );
});

t.test('containers without endpoints carry the spec tables in their ACLs', async (t) => {
  const s = await startTestServer(t, 'file');
  const expected: Record<string, { users: Perm[]; clients: Perm[] }> = {
    cookbooks: { users: ['create', 'read', 'update', 'delete'], clients: ['read'] },
    cookbook_artifacts: { users: ['create', 'read', 'update', 'delete'], clients: ['read'] },
    policies: { users: ['create', 'read', 'update', 'delete'], clients: ['read'] },
    policy_groups: { users: ['create', 'read', 'update', 'delete'], clients: ['read'] },
    sandboxes: { users: ['create'], clients: [] },
  };
  for (const [container, groups] of Object.entries(expected)) {
    const acl = (await s.pivotal.request('GET', `${ORG}/containers/${container}/_acl`)).body as Record<
      string,
      { groups: string[] }
    >;
    for (const perm of ['create', 'read', 'update', 'delete', 'grant'] as const) {
      const g = acl[perm]?.groups ?? [];
      t.ok(g.includes('admins'), `admins hold ${perm} on ${container}`);
      t.equal(g.includes('users'), (groups.users as string[]).includes(perm), `users ${perm} on ${container}`);
      t.equal(g.includes('clients'), (groups.clients as string[]).includes(perm), `clients ${perm} on ${container}`);
    }
  }
});

t.test('billing_admins and public_key_read_access', async (t) => {
  const s = await startTestServer(t, 'file');
  const billing = (await s.pivotal.request('GET', `${ORG}/groups/billing_admins/_acl`)).body as Record<
    string,
    { groups: string[] }
  >;
  t.same(
    ['create', 'read', 'update', 'delete'].map((p) => billing[p]?.groups.includes('billing_admins')),
    [false, true, true, false],
  );
  const pkra = (await s.pivotal.request('GET', `${ORG}/groups/public_key_read_access`)).body as { groups: string[] };
  t.same(pkra.groups.sort(), ['clients', 'users']);
});
