// /users, /server-admins and organization associations over real HTTP (reference 3, 4.1; spec 2.2, 5.6,
// 5.7): creation in both API versions, validation, conflicts, edits, renames, deletion and who may do what.
import t from 'tap';
import type { ApiClient } from '../../src/auth/api-client.js';
import {
  associate,
  createMember,
  createUser,
  eachStore,
  expectAnswer,
  expectStatus,
  keyPair,
} from '../support/api-fixtures.js';

const person = (name: string, extra: Record<string, unknown> = {}) => ({
  username: name,
  email: `${name}@example.com`,
  display_name: `${name} D`,
  first_name: 'First',
  last_name: "O'Brien",
  password: 'secret123',
  ...extra,
});
const missingRead = { error: ['missing read permission'] };

eachStore(t, async (t, s) => {
  await t.test('API v1 create_key returns chef_key with a private key that authenticates', async (t) => {
    const res = await s.pivotal.request('POST', '/users', person('alice', { create_key: true, middle_name: 'M.' }));
    const body = expectStatus(t, res, 201);
    t.equal(res.headers.get('location'), `${s.url}/users/alice`);
    t.same(Object.keys(body).sort(), ['chef_key', 'uri']);
    t.equal(body.uri, `${s.url}/users/alice`);
    const key = body.chef_key as Record<string, string>;
    t.match(key, {
      name: 'default',
      expiration_date: 'infinity',
      uri: `${s.url}/users/alice/keys/default`,
      public_key: /^-----BEGIN PUBLIC KEY-----/,
      private_key: /^-----BEGIN (RSA )?PRIVATE KEY-----/,
    });
    const alice = s.as('alice', String(key.private_key));
    expectAnswer(t, await alice.request('GET', '/users/alice'), 200, {
      username: 'alice',
      email: 'alice@example.com',
      display_name: 'alice D',
      first_name: 'First',
      middle_name: 'M.',
      last_name: "O'Brien",
    });
  });

  await t.test('API v1 with public_key, with neither, and the refused combinations', async (t) => {
    const pair = await keyPair(0);
    const withKey = expectStatus(
      t,
      await s.pivotal.request('POST', '/users', person('bob', { public_key: pair.publicKeyPem })),
      201,
    );
    t.same(withKey.chef_key, {
      name: 'default',
      public_key: pair.publicKeyPem,
      expiration_date: 'infinity',
      uri: `${s.url}/users/bob/keys/default`,
    });
    expectStatus(
      t,
      await s.as('bob', pair.privateKeyPem).request('GET', '/users/bob'),
      200,
      'bob signs with his own key',
    );
    expectAnswer(t, await s.pivotal.request('POST', '/users', person('keyless')), 201, {
      uri: `${s.url}/users/keyless`,
    });
    expectAnswer(t, await s.pivotal.request('GET', '/users/keyless/keys'), 200, []);
    expectAnswer(
      t,
      await s.pivotal.request('POST', '/users', person('both', { create_key: true, public_key: pair.publicKeyPem })),
      400,
      { error: ['You must specify either create_key or public_key, but not both'] },
    );
    expectAnswer(t, await s.pivotal.request('POST', '/users', person('privkey', { private_key: true })), 400, {
      error: ['Please use create_key: true instead of private_key: true'],
    });
  });

  await t.test('API v0 always returns a generated private_key unless a public_key is given', async (t) => {
    const v0 = s.as('pivotal', await s.keyOf('pivotal'), { apiVersion: 0 });
    const body = expectStatus(t, await v0.request('POST', '/users', person('oldie')), 201);
    t.same(Object.keys(body).sort(), ['private_key', 'uri']);
    const oldie = s.as('oldie', String(body.private_key), { apiVersion: 0 });
    const shown = expectStatus(t, await oldie.request('GET', '/users/oldie'), 200);
    t.match(shown.public_key, /^-----BEGIN PUBLIC KEY-----/, 'v0 shows the public key');
    t.notOk(
      'public_key' in
        expectStatus(t, await s.as('oldie', String(body.private_key)).request('GET', '/users/oldie'), 200),
      'v1 does not',
    );
    expectAnswer(
      t,
      await v0.request('POST', '/users', person('oldie2', { public_key: (await keyPair(1)).publicKeyPem })),
      201,
      { uri: `${s.url}/users/oldie2` },
    );
  });

  await t.test('invalid user bodies are a 400 naming the field', async (t) => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...person('x'), username: undefined }, "Field 'username' missing"],
      [person('Upper'), "Field 'username' invalid"],
      [person('has space'), "Field 'username' invalid"],
      [{ ...person('noemail'), email: undefined }, "Field 'email' missing"],
      [{ ...person('bademail'), email: 'not-an-email' }, "Field 'email' invalid"],
      [{ ...person('nodisplay'), display_name: undefined }, "Field 'display_name' missing"],
      [{ ...person('nopass'), password: undefined }, "Field 'password' missing"],
      [{ ...person('shortpass'), password: '12345' }, "Field 'password' invalid"],
      [{ ...person('badfirst'), first_name: '<script>' }, "Field 'first_name' invalid"],
    ];
    for (const [body, message] of cases)
      expectAnswer(t, await s.pivotal.request('POST', '/users', body), 400, { error: [message] }, message);
    expectStatus(
      t,
      await s.pivotal.request('POST', '/users', person('sixpass', { password: '123456', first_name: 'Zoë' })),
      201,
      '6-byte password, unicode name',
    );
    const users = expectStatus(t, await s.pivotal.request('GET', '/users'), 200);
    t.same(
      Object.keys(users).filter((n) =>
        ['x', 'upper', 'noemail', 'nodisplay', 'nopass', 'shortpass', 'badfirst'].includes(n),
      ),
      [],
      'nothing refused was created',
    );
  });

  await t.test('a taken name or email is a 409', async (t) => {
    const taken = { error: ['Username or email address already in use.'] };
    expectAnswer(
      t,
      await s.pivotal.request('POST', '/users', person('alice', { email: 'other@example.com' })),
      409,
      taken,
      'name',
    );
    expectAnswer(
      t,
      await s.pivotal.request('POST', '/users', person('alice2', { email: 'ALICE@example.com' })),
      409,
      taken,
      'email, any case',
    );
  });

  await t.test('list, filter by email, verbose', async (t) => {
    const list = expectStatus(t, await s.pivotal.request('GET', '/users'), 200);
    t.equal(list.alice, `${s.url}/users/alice`);
    t.equal(list.pivotal, `${s.url}/users/pivotal`, 'superusers are listed too');
    expectAnswer(t, await s.pivotal.request('GET', '/users?email=Bob@Example.com'), 200, { bob: `${s.url}/users/bob` });
    const verbose = expectStatus(t, await s.pivotal.request('GET', '/users?verbose=true'), 200);
    t.same(verbose.alice, {
      email: 'alice@example.com',
      first_name: 'First',
      last_name: "O'Brien",
      display_name: 'alice D',
    });
  });

  await t.test('get, update, rename and delete a user', async (t) => {
    expectAnswer(t, await s.pivotal.request('GET', '/users/nobody'), 404, { error: 'Could not find user nobody' });
    const bob = s.as('bob', (await keyPair(0)).privateKeyPem);
    expectAnswer(
      t,
      await bob.request('PUT', '/users/bob', { display_name: 'Robert' }),
      200,
      { uri: `${s.url}/users/bob` },
      'self update',
    );
    t.match((await s.pivotal.request('GET', '/users/bob')).body, {
      username: 'bob',
      display_name: 'Robert',
      email: 'bob@example.com',
    });
    expectAnswer(t, await bob.request('PUT', '/users/bob', { public_key: (await keyPair(1)).publicKeyPem }), 400, {
      error: ['Since Server API v1, all keys must be updated via the keys endpoint. '],
    });
    expectAnswer(t, await bob.request('PUT', '/users/bob', { email: 'ALICE@example.com' }), 409, {
      error: ['Username or email address already in use.'],
    });
    expectAnswer(t, await bob.request('PUT', '/users/bob', { username: 'alice' }), 409, {
      error: ["User 'alice' already exists"],
    });
    expectAnswer(t, await bob.request('PUT', '/users/bob', { username: 'Bad Name' }), 400, {
      error: ["Field 'username' invalid"],
    });

    const renamed = await bob.request('PUT', '/users/bob', { username: 'robert' });
    expectAnswer(t, renamed, 201, { uri: `${s.url}/users/robert` }, 'rename');
    t.equal(renamed.headers.get('location'), `${s.url}/users/robert`);
    expectStatus(t, await s.pivotal.request('GET', '/users/bob'), 404, 'the old name is gone');
    const robert = s.as('robert', (await keyPair(0)).privateKeyPem);
    t.match(expectStatus(t, await robert.request('GET', '/users/robert'), 200, 'the key follows the rename'), {
      username: 'robert',
      display_name: 'Robert',
    });

    expectAnswer(t, await s.pivotal.request('DELETE', '/users/robert'), 200, {
      username: 'robert',
      email: 'bob@example.com',
      display_name: 'Robert',
      first_name: 'First',
      last_name: "O'Brien",
    });
    expectStatus(t, await s.pivotal.request('GET', '/users/robert'), 404);
    expectAnswer(t, await robert.request('GET', '/users/alice'), 401, {
      error: ["Failed to authenticate as 'robert'. Ensure that your node_name and client key are correct."],
    });
  });

  await t.test('users without rights on other accounts get 403 until they join server-admins (spec 5.7)', async (t) => {
    const sam = await createUser(t, s, 'sam');
    expectAnswer(t, await sam.request('GET', '/users'), 403, missingRead, 'list');
    expectAnswer(t, await sam.request('GET', '/users/alice'), 403, missingRead, 'show');
    expectAnswer(t, await sam.request('POST', '/users', person('carol')), 403, {
      error: ['missing create permission'],
    });
    expectStatus(t, await sam.request('POST', '/server-admins', { username: 'sam' }), 403, 'only superusers grant it');
    expectAnswer(t, await s.pivotal.request('POST', '/server-admins', { username: 'sam' }), 200, ['pivotal', 'sam']);
    expectAnswer(t, await sam.request('GET', '/server-admins'), 200, ['pivotal', 'sam']);
    expectStatus(t, await sam.request('GET', '/users'), 200, 'list after the grant');
  });

  await t.test('server-admins manage ordinary users outside their orgs, but not superusers (spec 5.6)', async (t) => {
    const sam = s.as('sam', (await keyPair(0)).privateKeyPem);
    expectStatus(
      t,
      await sam.request('POST', '/users', person('carol', { public_key: (await keyPair(1)).publicKeyPem })),
      201,
      'create',
    );
    expectStatus(t, await sam.request('GET', '/users/admin'), 200, 'read a user of an org sam is not in');
    expectStatus(t, await sam.request('PUT', '/users/carol', { display_name: 'Carol C' }), 200, 'update');
    t.match((await sam.request('GET', '/users/carol')).body, { display_name: 'Carol C' });
    expectStatus(t, await sam.request('DELETE', '/users/carol'), 200, 'delete');
    expectAnswer(t, await sam.request('GET', '/users/pivotal'), 403, missingRead, 'read a superuser');
    expectAnswer(t, await sam.request('PUT', '/users/pivotal', { display_name: 'x' }), 403, {
      error: ['missing update permission'],
    });
    expectAnswer(t, await sam.request('DELETE', '/users/pivotal'), 403, { error: ['missing delete permission'] });
    expectAnswer(t, await sam.request('GET', '/users/pivotal/keys'), 403, missingRead);
    expectStatus(t, await s.pivotal.request('GET', '/users/pivotal'), 200, 'pivotal is untouched');
    expectAnswer(t, await s.pivotal.request('DELETE', '/server-admins/sam'), 200, ['pivotal']);
    expectAnswer(t, await sam.request('GET', '/users'), 403, missingRead, 'revoked');
  });

  await t.test('members of a shared organization may read each other; /users/NAME/organizations', async (t) => {
    const dana = await createUser(t, s, 'dana');
    expectAnswer(t, await dana.request('GET', '/users/admin'), 403, missingRead, 'no shared org yet');
    expectAnswer(t, await dana.request('GET', '/users/dana/organizations'), 200, []);
    await associate(t, s, 'default', 'dana');
    expectStatus(t, await dana.request('GET', '/users/admin'), 200, 'shared org');
    expectAnswer(
      t,
      await dana.request('PUT', '/users/admin', { display_name: 'x' }),
      403,
      { error: ['missing update permission'] },
      'read only',
    );
    const orgsOf = async (as: typeof dana) => {
      const res = await as.request('GET', '/users/dana/organizations');
      t.equal(res.status, 200);
      return res.body as Array<{ organization: { name: string; full_name?: string; guid?: string } }>;
    };
    t.match(
      await orgsOf(dana),
      [{ organization: { name: 'default', full_name: 'default', guid: /^[0-9a-f]{32}$/ } }],
      'name, full name and guid',
    );
    // Another member sees only the organizations it shares with dana.
    expectStatus(
      t,
      await s.pivotal.request('POST', '/organizations', { name: 'dana-only', full_name: 'Dana Only' }),
      201,
    );
    await associate(t, s, 'dana-only', 'dana');
    t.same(
      (await orgsOf(dana)).map((o) => o.organization.name),
      ['dana-only', 'default'],
      'dana sees both of hers',
    );
    t.same(
      (await orgsOf(s.admin)).map((o) => o.organization.name),
      ['default'],
      'admin sees only the shared one',
    );
  });

  await t.test('associating users with an organization', async (t) => {
    expectAnswer(t, await s.admin.request('GET', '/organizations/default/users'), 200, [
      { user: { username: 'admin' } },
      { user: { username: 'dana' } },
    ]);
    await createUser(t, s, 'erin');
    const notMember = { error: 'Cannot find a user erin in organization default' };
    expectAnswer(t, await s.admin.request('GET', '/organizations/default/users/erin'), 404, notMember, 'before');
    expectAnswer(
      t,
      await s.admin.request('DELETE', '/organizations/default/users/erin'),
      404,
      notMember,
      'remove before',
    );
    expectAnswer(
      t,
      await s.admin.request('POST', '/organizations/default/users', { username: 'erin' }),
      403,
      { error: ['missing create permission'] },
      'org admins invite, not force',
    );
    const added = await s.pivotal.request('POST', '/organizations/default/users', { username: 'erin' });
    expectAnswer(t, added, 201, { uri: `${s.url}/organizations/default/users/erin` });
    expectAnswer(t, await s.pivotal.request('POST', '/organizations/default/users', { username: 'erin' }), 409, {
      error: 'The association already exists.',
    });
    expectAnswer(t, await s.pivotal.request('POST', '/organizations/default/users', { username: 'ghost' }), 404, {
      error: 'Could not find user ghost',
    });
    expectAnswer(t, await s.pivotal.request('POST', '/organizations/default/users', {}), 400, {
      error: ["Field 'username' missing"],
    });
    t.match(expectStatus(t, await s.admin.request('GET', '/organizations/default/users/erin'), 200), {
      username: 'erin',
      email: 'erin@example.com',
    });
    t.ok(
      (
        (await s.admin.request('GET', '/organizations/default/groups/users')).body as { users: string[] }
      ).users.includes('erin'),
      'erin joined users',
    );

    t.match(expectStatus(t, await s.admin.request('DELETE', '/organizations/default/users/erin'), 200), {
      username: 'erin',
    });
    expectAnswer(t, await s.admin.request('GET', '/organizations/default/users/erin'), 404, notMember, 'after');
    t.notOk(
      (
        (await s.admin.request('GET', '/organizations/default/groups/users')).body as { users: string[] }
      ).users.includes('erin'),
      'erin left users',
    );
    const erin = s.as('erin', (await keyPair(0)).privateKeyPem);
    expectAnswer(t, await erin.request('GET', '/organizations/default'), 403, {
      error: ["'erin' not associated with organization 'default'"],
    });
  });

  await t.test('members may leave on their own; org admins cannot be removed', async (t) => {
    const dana: ApiClient = s.as('dana', (await keyPair(0)).privateKeyPem);
    const frank = await createMember(t, s, 'default', 'frank');
    expectAnswer(
      t,
      await frank.request('DELETE', '/organizations/default/users/dana'),
      403,
      { error: ['missing update permission'] },
      'not others',
    );
    expectStatus(t, await dana.request('DELETE', '/organizations/default/users/dana'), 200, 'self');
    expectAnswer(t, await s.pivotal.request('DELETE', '/organizations/default/users/admin'), 403, {
      error:
        "Please remove admin from this organization's admins group before removing him or her from the organization.",
    });
    expectStatus(t, await s.admin.request('GET', '/organizations/default'), 200, 'admin is still a member');
  });

  await t.test('deleting a user ends its associations', async (t) => {
    expectStatus(t, await s.pivotal.request('DELETE', '/users/frank'), 200);
    expectAnswer(t, await s.admin.request('GET', '/organizations/default/users'), 200, [
      { user: { username: 'admin' } },
    ]);
    expectStatus(t, await s.pivotal.request('POST', '/users', person('frank')), 201, 'the name is free again');
    expectAnswer(
      t,
      await s.admin.request('GET', '/organizations/default/users/frank'),
      404,
      { error: 'Cannot find a user frank in organization default' },
      'and not associated',
    );
  });

  await t.test('a renamed user keeps its organizations, groups and rights; the old name keeps none', async (t) => {
    await createMember(t, s, 'default', 'gina');
    expectStatus(
      t,
      await s.pivotal.request('PUT', '/organizations/default/groups/admins', { actors: { users: ['admin', 'gina'] } }),
      200,
    );
    expectStatus(t, await s.pivotal.request('POST', '/server-admins', { username: 'gina' }), 200);
    const gina = s.as('gina', (await keyPair(0)).privateKeyPem);
    expectStatus(t, await gina.request('PUT', '/users/gina', { username: 'gina2' }), 201);

    const gina2 = s.as('gina2', (await keyPair(0)).privateKeyPem);
    const admins = expectStatus(
      t,
      await gina2.request('GET', '/organizations/default/groups/admins'),
      200,
      'still an org admin',
    );
    t.same(admins.users, ['admin', 'gina2']);
    t.match((await gina2.request('GET', '/users/gina2/organizations')).body, [{ organization: { name: 'default' } }]);
    expectAnswer(t, await gina2.request('GET', '/organizations/default/users'), 200, [
      { user: { username: 'admin' } },
      { user: { username: 'gina2' } },
    ]);
    expectAnswer(t, await gina2.request('GET', '/server-admins'), 200, ['gina2', 'pivotal']);

    const pair = await keyPair(1);
    expectStatus(
      t,
      await s.pivotal.request(
        'POST',
        '/users',
        person('gina', { email: 'new-gina@example.com', public_key: pair.publicKeyPem }),
      ),
      201,
      'the old name is free',
    );
    const newGina = s.as('gina', pair.privateKeyPem);
    expectAnswer(t, await newGina.request('GET', '/organizations/default'), 403, {
      error: ["'gina' not associated with organization 'default'"],
    });
    expectAnswer(t, await newGina.request('GET', '/users'), 403, missingRead, 'not a server-admin');
    expectAnswer(t, await newGina.request('GET', '/users/gina2'), 403, missingRead, 'no rights on the renamed account');
  });
});
