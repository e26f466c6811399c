// /organizations and /organizations/ORG over real HTTP (reference 3; spec 2.1, 2.2, 5): creation with its
// validator, default groups and containers, name rules, listing, update, deletion and who may do each.
import t from 'tap';
import { createMember, eachStore, expectAnswer, expectStatus, keyPair } from '../support/api-fixtures.js';

const CONTAINERS = [
  'clients',
  'containers',
  'cookbook_artifacts',
  'cookbooks',
  'data',
  'environments',
  'groups',
  'nodes',
  'policies',
  'policy_groups',
  'roles',
  'sandboxes',
];
const GROUPS = ['admins', 'billing_admins', 'clients', 'public_key_read_access', 'users'];

eachStore(t, async (t, s) => {
  await t.test('creating an organization answers 201 with its validator key, which authenticates', async (t) => {
    const res = await s.pivotal.request('POST', '/organizations', {
      name: 'acme',
      full_name: 'Acme Inc',
      org_type: 'Business',
    });
    const body = expectStatus(t, res, 201);
    t.equal(res.headers.get('location'), `${s.url}/organizations/acme`);
    t.same(Object.keys(body).sort(), ['clientname', 'private_key', 'uri']);
    t.equal(body.uri, `${s.url}/organizations/acme`);
    t.equal(body.clientname, 'acme-validator');
    t.match(body.private_key, /^-----BEGIN (RSA )?PRIVATE KEY-----/);

    const validator = s.as('acme-validator', String(body.private_key));
    expectStatus(
      t,
      await validator.request('POST', '/organizations/acme/clients', { name: 'first-node' }),
      201,
      'the validator registers a client',
    );
    expectAnswer(
      t,
      await validator.request('GET', '/organizations/acme/clients/first-node'),
      403,
      { error: ['missing read permission'] },
      'and can do nothing else',
    );
    expectAnswer(
      t,
      await validator.request('GET', '/organizations/default'),
      401,
      { error: ["Failed to authenticate as 'acme-validator'. Ensure that your node_name and client key are correct."] },
      'nor act in another org',
    );
  });

  await t.test('a new organization has the default containers, groups and memberships', async (t) => {
    const containers = expectStatus(t, await s.pivotal.request('GET', '/organizations/acme/containers'), 200);
    t.same(Object.keys(containers).sort(), CONTAINERS);
    t.equal(containers.nodes, `${s.url}/organizations/acme/containers/nodes`);
    const groups = expectStatus(t, await s.pivotal.request('GET', '/organizations/acme/groups'), 200);
    t.same(Object.keys(groups).sort(), GROUPS);
    const group = async (name: string) =>
      expectStatus(t, await s.pivotal.request('GET', `/organizations/acme/groups/${name}`), 200, name);
    t.same(
      (await group('public_key_read_access')).groups,
      ['users', 'clients'],
      'users and clients may read keys (spec 5)',
    );
    t.same((await group('clients')).clients, ['first-node'], 'a registered client joins clients (spec 2.2)');
    // The creating user joins admins and users (reference 3, step 5).
    t.match(await group('admins'), {
      name: 'admins',
      groupname: 'admins',
      orgname: 'acme',
      users: ['pivotal'],
      clients: [],
    });
    await createMember(t, s, 'acme', 'acme-member');
    t.same((await group('users')).users, ['pivotal', 'acme-member'], 'an associated user joins users');
    // The default organization's admins hold the admin user made at first start (spec 1).
    const admins = expectStatus(t, await s.pivotal.request('GET', '/organizations/default/groups/admins'), 200);
    t.same(admins.users, ['pivotal', 'admin']);
  });

  await t.test('name and full_name are validated, naming the field', async (t) => {
    const post = (body: Record<string, unknown>) => s.pivotal.request('POST', '/organizations', body);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ full_name: 'No Name' }, "Field 'name' missing"],
      [{ name: 'no-full-name' }, "Field 'full_name' missing"],
      [{ name: 'Upper', full_name: 'x' }, "Field 'name' invalid"],
      [{ name: ' lead', full_name: 'x' }, "Field 'name' invalid"],
      [{ name: '-dash', full_name: 'x' }, "Field 'name' invalid"],
      [{ name: '_under', full_name: 'x' }, "Field 'name' invalid"],
      [{ name: 'dot.ted', full_name: 'x' }, "Field 'name' invalid"],
      [{ name: '', full_name: 'x' }, "Field 'name' invalid"],
      [{ name: 'a'.repeat(256), full_name: 'x' }, "Field 'name' invalid"],
      [{ name: 42, full_name: 'x' }, "Field 'name' invalid"],
      [{ name: 'lead-space', full_name: ' Leading' }, "Field 'full_name' invalid"],
      [{ name: 'empty-full', full_name: '' }, "Field 'full_name' invalid"],
      [{ name: 'long-full', full_name: 'f'.repeat(1024) }, "Field 'full_name' invalid"],
    ];
    for (const [body, message] of cases)
      expectAnswer(t, await post(body), 400, { error: [message] }, JSON.stringify(body).slice(0, 60));
    expectAnswer(
      t,
      await s.pivotal.request('POST', '/organizations', '{'),
      400,
      { error: ['invalid JSON'] },
      'a JSON string is not an object',
    );
    expectStatus(t, await post({ name: 'x', full_name: 'x' }), 201, 'one character each');
  });

  await t.test('a 255-character name and a 1023-character full_name are accepted (spec 2.1)', async (t) => {
    const post = (body: Record<string, unknown>) => s.pivotal.request('POST', '/organizations', body);
    const edge = { name: `9${'z'.repeat(254)}`, full_name: `F${'u l'.repeat(340)}l!` };
    t.equal(edge.name.length, 255);
    t.equal(edge.full_name.length, 1023);
    expectStatus(t, await post(edge), 201, '255-character name and 1023-character full_name');
    const shown = expectStatus(t, await s.pivotal.request('GET', `/organizations/${edge.name}`), 200);
    t.equal(shown.full_name, edge.full_name);
  });

  await t.test('a duplicate name is a 409', async (t) => {
    expectAnswer(t, await s.pivotal.request('POST', '/organizations', { name: 'acme', full_name: 'Again' }), 409, {
      error: 'Organization already exists',
    });
  });

  await t.test('list and show', async (t) => {
    const list = expectStatus(t, await s.pivotal.request('GET', '/organizations'), 200);
    t.equal(list.acme, `${s.url}/organizations/acme`);
    t.equal(list.default, `${s.url}/organizations/default`);
    t.equal(list.x, `${s.url}/organizations/x`);
    const acme = expectStatus(t, await s.pivotal.request('GET', '/organizations/acme'), 200);
    t.same(Object.keys(acme).sort(), ['full_name', 'guid', 'name']);
    t.match(acme, { name: 'acme', full_name: 'Acme Inc', guid: /^[0-9a-f]{32}$/ });
    const member = await createMember(t, s, 'default', 'org-reader');
    expectStatus(
      t,
      await member.request('GET', '/organizations/default'),
      200,
      'members of users read their organization',
    );
  });

  await t.test('PUT changes full_name only; another name is a 400', async (t) => {
    expectAnswer(
      t,
      await s.pivotal.request('PUT', '/organizations/acme', { name: 'acme', full_name: 'Acme Two' }),
      200,
      { name: 'acme', full_name: 'Acme Two' },
    );
    t.match((await s.pivotal.request('GET', '/organizations/acme')).body, { name: 'acme', full_name: 'Acme Two' });
    expectAnswer(t, await s.pivotal.request('PUT', '/organizations/acme', { name: 'other', full_name: 'Other' }), 400, {
      error: ["Field 'name' invalid"],
    });
    expectAnswer(t, await s.pivotal.request('PUT', '/organizations/acme', { name: 'acme', full_name: ' x' }), 400, {
      error: ["Field 'full_name' invalid"],
    });
    expectAnswer(t, await s.pivotal.request('PUT', '/organizations/acme', { name: 'acme' }), 400, {
      error: ["Field 'full_name' missing"],
    });
    t.match(
      (await s.pivotal.request('GET', '/organizations/acme')).body,
      { full_name: 'Acme Two' },
      'refused updates change nothing',
    );
  });

  await t.test('non-superusers may not create or list organizations, nor change one as a plain member', async (t) => {
    expectAnswer(t, await s.admin.request('POST', '/organizations', { name: 'mine', full_name: 'Mine' }), 403, {
      error: ['missing create permission'],
    });
    expectAnswer(t, await s.admin.request('GET', '/organizations'), 403, { error: ['missing read permission'] });
    const member = s.as('org-reader', (await keyPair(0)).privateKeyPem);
    expectAnswer(
      t,
      await member.request('PUT', '/organizations/default', { name: 'default', full_name: 'Mine' }),
      403,
      { error: ['missing update permission'] },
    );
    expectAnswer(t, await member.request('DELETE', '/organizations/default'), 403, {
      error: ['missing delete permission'],
    });
    expectStatus(
      t,
      await s.admin.request('PUT', '/organizations/default', { name: 'default', full_name: 'Default Org' }),
      200,
      'org admins may update',
    );
    expectStatus(t, await s.pivotal.request('GET', '/organizations/mine'), 404, 'nothing was created');
  });

  await t.test('other methods are a 405', async (t) => {
    for (const [method, path] of [
      ['PATCH', '/organizations'],
      ['PUT', '/organizations'],
      ['DELETE', '/organizations'],
      ['POST', '/organizations/acme'],
      ['PATCH', '/organizations/acme'],
    ] as const) {
      t.equal(
        (
          await s.pivotal.request(
            method,
            path,
            method === 'PATCH' || method === 'PUT' || method === 'POST' ? {} : undefined,
          )
        ).status,
        405,
        `${method} ${path}`,
      );
    }
  });

  await t.test('DELETE removes the organization: 404 afterwards, and the name can be used again', async (t) => {
    const validatorKey = (await s.pivotal.request('POST', '/organizations', { name: 'doomed', full_name: 'Doomed' }))
      .body as { private_key: string };
    const guid = bodyGuid(await s.pivotal.request('GET', '/organizations/doomed'));
    const member = await createMember(t, s, 'doomed', 'doomed-member');
    expectAnswer(t, await member.request('GET', '/users/doomed-member/organizations'), 200, [
      { organization: { name: 'doomed', full_name: 'Doomed', guid } },
    ]);
    const res = await s.pivotal.request('DELETE', '/organizations/doomed');
    expectAnswer(t, res, 200, { name: 'doomed', full_name: 'Doomed', guid });
    const gone = { error: ["organization 'doomed' does not exist."] };
    expectAnswer(t, await s.pivotal.request('GET', '/organizations/doomed'), 404, gone);
    expectAnswer(t, await s.pivotal.request('GET', '/organizations/doomed/groups'), 404, gone);
    expectAnswer(t, await s.pivotal.request('DELETE', '/organizations/doomed'), 404, gone);
    t.notOk('doomed' in expectStatus(t, await s.pivotal.request('GET', '/organizations'), 200), 'no longer listed');

    const again = expectStatus(
      t,
      await s.pivotal.request('POST', '/organizations', { name: 'doomed', full_name: 'Reborn' }),
      201,
    );
    expectAnswer(
      t,
      await s
        .as('doomed-validator', validatorKey.private_key)
        .request('POST', '/organizations/doomed/clients', { name: 'n' }),
      401,
      { error: ["Invalid signature for user or client 'doomed-validator'"] },
      'the old validator key is dead',
    );
    expectStatus(
      t,
      await s
        .as('doomed-validator', String(again.private_key))
        .request('POST', '/organizations/doomed/clients', { name: 'n' }),
      201,
      'the new one works',
    );
    const clients = expectStatus(t, await s.pivotal.request('GET', '/organizations/doomed/clients'), 200);
    t.same(Object.keys(clients).sort(), ['doomed-validator', 'n'], 'nothing of the old organization came back');
    expectAnswer(t, await s.pivotal.request('GET', '/organizations/doomed/users'), 200, [], 'no members');
    expectAnswer(
      t,
      await member.request('GET', '/users/doomed-member/organizations'),
      200,
      [],
      'the member lost the old organization',
    );
    expectAnswer(t, await member.request('GET', '/organizations/doomed'), 403, {
      error: ["'doomed-member' not associated with organization 'doomed'"],
    });
    t.not(bodyGuid(await s.pivotal.request('GET', '/organizations/doomed')), guid);
  });
});

function bodyGuid(res: { body: unknown }): string {
  return String((res.body as { guid?: unknown }).guid);
}
