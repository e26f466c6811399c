// Error paths of roles, environments, data bags and the _acl endpoints (reference 5.1), on both stores.
import t from 'tap';
import { STORE_KINDS, startTestServer } from '../support/server.js';

const ORG = '/organizations/default';

for (const kind of STORE_KINDS) {
  t.test(`document and ACL errors on the ${kind} store`, async (t) => {
    const s = await startTestServer(t, kind);
    const a = s.admin;
    const answer = async (method: string, path: string, body?: unknown) => {
      const r = await a.request(method, path, body);
      return [r.status, r.body];
    };

    t.same(await answer('POST', `${ORG}/roles`, { name: 'web', run_list: ['role[base]'] }), [
      201,
      { uri: `${s.url}${ORG}/roles/web` },
    ]);
    t.same(await answer('POST', `${ORG}/roles`, { name: 'web' }), [409, { error: ['Role already exists'] }]);
    t.same(await answer('POST', `${ORG}/roles`, { description: 'no name' }), [
      400,
      { error: ["Field 'name' missing"] },
    ]);
    t.same(await answer('POST', `${ORG}/roles`, { name: 'bad name' }), [400, { error: ["Field 'name' invalid"] }]);
    t.same(await answer('POST', `${ORG}/roles`, { name: 'x', run_list: ['role[with space]'] }), [
      400,
      { error: ["Field 'run_list.0' invalid"] },
    ]);
    t.same(await answer('PUT', `${ORG}/roles/web`, { name: 'other' }), [400, { error: ['Role name mismatch.'] }]);
    t.same(await answer('GET', `${ORG}/roles/nope`), [404, { error: ['Cannot load role nope'] }]);
    t.same(await answer('PATCH', `${ORG}/roles/web`), [
      405,
      { error: [`Method PATCH not allowed on ${ORG}/roles/web`] },
    ]);
    t.match(await answer('GET', `${ORG}/roles/web`), [
      200,
      { name: 'web', run_list: ['role[base]'], json_class: 'Chef::Role', chef_type: 'role' },
    ]);
    t.same(await answer('DELETE', `${ORG}/roles/web`), [
      200,
      {
        name: 'web',
        description: '',
        json_class: 'Chef::Role',
        chef_type: 'role',
        default_attributes: {},
        override_attributes: {},
        run_list: ['role[base]'],
        env_run_lists: {},
      },
    ]);

    t.same(await answer('POST', `${ORG}/environments`, { name: 'prod', cookbook_versions: { nginx: '= 1.0.0' } }), [
      201,
      { uri: `${s.url}${ORG}/environments/prod` },
    ]);
    t.same(await answer('POST', `${ORG}/environments`, { name: 'prod' }), [
      409,
      { error: ['Environment already exists'] },
    ]);
    t.same(await answer('POST', `${ORG}/environments`, { name: 'x', cookbook_versions: { nginx: 1 } }), [
      400,
      { error: ["Field 'cookbook_versions.nginx' invalid"] },
    ]);
    t.same(await answer('PUT', `${ORG}/environments/_default`, { name: '_default' }), [
      405,
      { error: ["The '_default' environment cannot be modified."] },
    ]);

    t.same(await answer('POST', `${ORG}/data`, { name: 'bad bag' }), [400, { error: ["Field 'name' invalid"] }]);
    t.equal((await a.request('POST', `${ORG}/data`, { name: 'creds' })).status, 201);
    t.same(await answer('POST', `${ORG}/data`, { name: 'creds' }), [409, { error: ['Data Bag already exists'] }]);
    t.same(await answer('POST', `${ORG}/data/creds`, { password: 'no id' }), [400, { error: ["Field 'id' missing"] }]);
    t.same(await answer('POST', `${ORG}/data/nobag`, { id: 'x' }), [404, { error: ['Cannot load data bag nobag'] }]);
    t.equal((await a.request('POST', `${ORG}/data/creds`, { id: 'db' })).status, 201);
    t.same(await answer('POST', `${ORG}/data/creds`, { id: 'db' }), [409, { error: ['Data Bag Item already exists'] }]);
    t.same(await answer('PUT', `${ORG}/data/creds/db`, { id: 'other' }), [
      400,
      { error: ['DataBagItem name mismatch.'] },
    ]);
    t.same(
      await answer('PUT', `${ORG}/data/creds/db`, { user: 'app' }),
      [200, { user: 'app', id: 'db' }],
      'an item may be sent without its id',
    );
    t.same(await answer('GET', `${ORG}/data/creds/nope`), [
      404,
      { error: ['Cannot load data bag item nope for data bag creds'] },
    ]);
    t.same(await answer('DELETE', `${ORG}/data/creds`), [
      200,
      { name: 'creds', json_class: 'Chef::DataBag', chef_type: 'data_bag' },
    ]);
    t.same(
      await answer('GET', `${ORG}/data/creds/db`),
      [404, { error: ['Cannot load data bag creds'] }],
      'items go with their bag',
    );

    // ACL PUT validation (reference 5.1).
    t.equal((await a.request('POST', `${ORG}/nodes`, { name: 'web1' })).status, 201);
    t.equal((await a.request('POST', `${ORG}/clients`, { name: 'admin' })).status, 201, 'a client named like a user');
    t.match(await answer('PUT', `${ORG}/nodes/web1/_acl/read`, { read: { actors: ['admin'], groups: [] } }), [
      422,
      { error: [/exist as both clients and users.*'admin'/] },
    ]);
    t.same(
      await answer('PUT', `${ORG}/nodes/web1/_acl/read`, {
        read: { actors: [], users: ['admin'], clients: ['admin'], groups: ['admins'] },
      }),
      [200, {}],
      'the split form resolves the ambiguity',
    );
    t.same(
      await answer('PUT', `${ORG}/nodes/web1/_acl/read`, {
        read: { actors: ['x'], users: [], clients: [], groups: [] },
      }),
      [400, { error: ["When providing 'users' and 'clients' fields, the 'actors' field must have a value of []."] }],
    );
    t.same(await answer('PUT', `${ORG}/nodes/web1/_acl/read`, { read: { actors: [], groups: ['ghosts'] } }), [
      400,
      { error: ["The group(s) 'ghosts' do not exist in this organization."] },
    ]);
    t.same(await answer('PUT', `${ORG}/nodes/web1/_acl/read`, { read: { actors: ['other::admin'], groups: [] } }), [
      400,
      { error: ["Scoped actor names are not allowed in this context: 'other::admin'"] },
    ]);
    t.same(await answer('PUT', `${ORG}/nodes/web1/_acl/read`, { update: { actors: [], groups: [] } }), [
      400,
      { error: ["Field 'read' missing"] },
    ]);
    t.same(await answer('PUT', `${ORG}/nodes/web1/_acl/fly`, { fly: { actors: [], groups: [] } }), [
      400,
      { error: ["Invalid permission 'fly': expected one of create, read, update, delete, grant"] },
    ]);
    t.same(await answer('PUT', `${ORG}/nodes/web1/_acl/grant`, { grant: { actors: [], groups: [] } }), [
      403,
      { error: ['Admin group cannot be removed from the Grant ACE'] },
    ]);
    t.same(await answer('GET', `${ORG}/nodes/nope/_acl`), [404, { error: ['Cannot load node nope'] }]);
    const member = await s.pivotal.request('POST', '/users', {
      username: 'nell',
      email: 'nell@example.com',
      display_name: 'Nell',
      password: 'secret123',
      create_key: true,
    });
    t.equal((await s.pivotal.request('POST', `${ORG}/users`, { username: 'nell' })).status, 201);
    const nell = s.as('nell', (member.body as { chef_key: { private_key: string } }).chef_key.private_key);
    t.same(
      [
        (await nell.request('GET', `${ORG}/nodes/web1/_acl`)).status,
        (await nell.request('GET', `${ORG}/nodes/web1/_acl`)).body,
      ],
      [403, { error: ['missing read permission'] }],
      'reading an ACL needs grant',
    );
    t.same((await nell.request('PUT', `${ORG}/nodes/web1/_acl/read`, { read: { actors: [], groups: [] } })).body, {
      error: ['missing update permission'],
    });
  });
}
