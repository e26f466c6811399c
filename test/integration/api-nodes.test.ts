// Nodes, roles, environments, data bags and the _acl endpoints over real HTTP.
import t from 'tap';
import { startTestServer } from '../support/server.js';

const ORG = '/organizations/default';

t.test('node documents and their ACLs', async (t) => {
  const s = await startTestServer(t, 'file');
  const created = await s.admin.request('POST', `${ORG}/nodes`, {
    name: 'web1',
    run_list: ['nginx', 'role[web]'],
    normal: { push_jobs: { whitelist: { 'chef-client': 'chef-client' } } },
  });
  t.equal(created.status, 201);
  t.match(created.body, { uri: `${s.url}${ORG}/nodes/web1` });
  const node = await s.admin.request('GET', `${ORG}/nodes/web1`);
  t.same(node.body, {
    name: 'web1',
    chef_environment: '_default',
    json_class: 'Chef::Node',
    chef_type: 'node',
    run_list: ['recipe[nginx]', 'role[web]'],
    normal: { push_jobs: { whitelist: { 'chef-client': 'chef-client' } } },
    default: {},
    override: {},
    automatic: {},
  });
  t.equal((await s.admin.request('POST', `${ORG}/nodes`, { name: 'web1' })).status, 409);
  const bad = await s.admin.request('POST', `${ORG}/nodes`, { name: 'web 1' });
  t.same([bad.status, bad.body], [400, { error: ["Field 'name' invalid"] }]);
  const unknown = await s.admin.request('POST', `${ORG}/nodes`, { name: 'x', colour: 'red' });
  t.same([unknown.status, unknown.body], [400, { error: ['Invalid key colour in request body'] }]);
  const mismatch = await s.admin.request('PUT', `${ORG}/nodes/web1`, { name: 'web2' });
  t.equal(mismatch.status, 400);

  const acl = await s.admin.request('GET', `${ORG}/nodes/web1/_acl`);
  t.equal(acl.status, 200);
  t.match(acl.body, {
    read: { actors: ['admin'], groups: ['admins', 'users', 'clients'] },
    grant: { actors: ['admin'], groups: ['admins'] },
  });
  const put = await s.admin.request('PUT', `${ORG}/nodes/web1/_acl/read`, {
    read: { actors: ['admin'], groups: ['admins'] },
  });
  t.same([put.status, put.body], [200, {}]);
  const granular = await s.admin.request('GET', `${ORG}/nodes/web1/_acl?detail=granular`);
  t.match(granular.body, { read: { actors: [], users: ['admin'], clients: [], groups: ['admins'] } });
  const unknownActor = await s.admin.request('PUT', `${ORG}/nodes/web1/_acl/read`, {
    read: { actors: ['ghost'], groups: [] },
  });
  t.same(
    [unknownActor.status, unknownActor.body],
    [400, { error: ["The actor(s) 'ghost' do not exist in this organization as clients or users."] }],
  );
  const half = await s.admin.request('PUT', `${ORG}/nodes/web1/_acl/read`, {
    read: { actors: [], users: ['admin'], groups: [] },
  });
  t.same(half.status, 400);

  const envs = await s.admin.request('GET', `${ORG}/environments`);
  t.match(envs.body, { _default: `${s.url}${ORG}/environments/_default` });
  t.equal((await s.admin.request('DELETE', `${ORG}/environments/_default`)).status, 405);

  t.equal((await s.admin.request('POST', `${ORG}/data`, { name: 'creds' })).status, 201);
  t.equal((await s.admin.request('POST', `${ORG}/data/creds`, { id: 'db', password: 'x' })).status, 201);
  t.same((await s.admin.request('GET', `${ORG}/data/creds/db`)).body, { id: 'db', password: 'x' });
  t.same((await s.admin.request('GET', `${ORG}/data/creds`)).body, { db: `${s.url}${ORG}/data/creds/db` });
  // A bag's ACL is read and written beside its items' paths, and answers only its own methods.
  const bagAcl = await s.admin.request('GET', `${ORG}/data/creds/_acl`);
  t.equal(bagAcl.status, 200);
  t.match(bagAcl.body, { read: { actors: Array, groups: Array }, grant: { groups: ['admins'] } });
  const readers = { read: { actors: ['admin'], groups: ['admins'] } };
  t.equal((await s.admin.request('PUT', `${ORG}/data/creds/_acl/read`, readers)).status, 200);
  t.match((await s.admin.request('GET', `${ORG}/data/creds/_acl`)).body, {
    read: { actors: ['admin'], groups: ['admins'] },
  });
  t.equal((await s.admin.request('PUT', `${ORG}/data/creds/_acl/wield`, readers)).status, 400);
  const putAcl = await s.admin.request('PUT', `${ORG}/data/creds/_acl`, { id: '_acl' });
  t.equal(putAcl.status, 405);
  t.equal(putAcl.headers.get('allow'), 'GET');
  t.equal((await s.admin.request('DELETE', `${ORG}/data/creds/_acl`)).status, 405);
  t.equal((await s.admin.request('GET', `${ORG}/data/creds/_acl/read`)).status, 405);
  t.equal((await s.admin.request('PUT', `${ORG}/data/creds/db/read`, readers)).status, 404);
  t.equal((await s.admin.request('GET', `${ORG}/data/creds/db/read`)).status, 404);
  t.equal((await s.admin.request('PATCH', `${ORG}/data/creds/db`)).headers.get('allow'), 'GET, PUT, DELETE');
  t.same((await s.admin.request('GET', `${ORG}/data/creds/db`)).body, { id: 'db', password: 'x' });
});

t.test('a user account ACL: read and replaced by its owner, refused to others', async (t) => {
  const s = await startTestServer(t, 'file');
  const made = await s.pivotal.request('POST', '/users', {
    username: 'uma',
    email: 'uma@example.com',
    display_name: 'Uma',
    password: 'secret123',
    create_key: true,
  });
  const uma = s.as('uma', (made.body as { chef_key: { private_key: string } }).chef_key.private_key);
  const acl = await uma.request('GET', '/users/uma/_acl');
  t.equal(acl.status, 200);
  t.match(acl.body, { read: { actors: ['uma'], groups: ['server-admins'] }, grant: { actors: ['uma'], groups: [] } });
  t.same(
    (
      await uma.request('PUT', '/users/uma/_acl/read', {
        read: { actors: ['uma', 'admin'], groups: ['server-admins'] },
      })
    ).status,
    200,
  );
  t.match((await uma.request('GET', '/users/uma/_acl')).body, { read: { actors: ['uma', 'admin'] } });
  t.same((await uma.request('PUT', '/users/uma/_acl/read', { read: { actors: ['ghost'], groups: [] } })).body, {
    error: ["The user 'ghost' does not exist."],
  });
  t.same(
    (await uma.request('PUT', '/users/uma/_acl/read', { read: { actors: [], users: [], clients: ['c1'], groups: [] } }))
      .body,
    { error: ['Clients can not be added to global ACL entries.'] },
  );
  t.equal((await s.admin.request('GET', '/users/uma/_acl')).status, 403, 'another user without grant is refused');
  t.equal((await s.admin.request('GET', '/users/uma')).status, 200, 'a read right given through the ACL works');
});

t.test("an organization's member shows only to those who may read the user", async (t) => {
  const s = await startTestServer(t, 'file');
  const made = await s.admin.request('POST', '/organizations/default/clients', { name: 'box', create_key: true });
  const box = s.as('box', (made.body as { chef_key: { private_key: string } }).chef_key.private_key);
  t.equal((await box.request('GET', '/organizations/default')).status, 200, 'a client reads the organization');
  t.same(
    (await box.request('GET', '/organizations/default/users/admin')).body,
    { error: ['missing read permission'] },
    'but not its users',
  );
  t.match(
    (await s.admin.request('GET', '/organizations/default/users/admin')).body,
    { username: 'admin' },
    'a member reads itself',
  );
});
