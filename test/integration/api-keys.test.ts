// The keys API over real HTTP (reference 4.3; spec 4.3): client and user keys listed, read, created,
// updated and deleted; who may read them; expiry; the signing key's protection; SPKI and PKCS#1 input.
import { createPublicKey } from 'node:crypto';
import t from 'tap';
import {
  createClient,
  createMember,
  createUser,
  eachStore,
  expectAnswer,
  expectStatus,
  keyPair,
} from '../support/api-fixtures.js';

const KC = '/organizations/default/clients/kc';
const DATE_MESSAGE = /^Field expiration_date is invalid\. All dates must be a valid date in ISO8601 form/;
const pkcs1 = (spki: string) => createPublicKey(spki).export({ type: 'pkcs1', format: 'pem' }).toString();
const keyGate = {
  error: [
    'Requestor not found to be a member of group public_key_read_access which is necessary for read access for this request.',
  ],
};

eachStore(t, async (t, s) => {
  const kc = await createClient(t, s, 'default', 'kc', 0, s.admin);
  const signer = async (pair: number) => s.as('kc', (await keyPair(pair)).privateKeyPem);

  await t.test('a client key is listed and read', async (t) => {
    expectAnswer(t, await s.admin.request('GET', `${KC}/keys`), 200, [
      { uri: `${s.url}${KC}/keys/default`, name: 'default', expired: false },
    ]);
    expectAnswer(t, await s.admin.request('GET', `${KC}/keys/default`), 200, {
      name: 'default',
      public_key: (await keyPair(0)).publicKeyPem,
      expiration_date: 'infinity',
    });
    expectAnswer(t, await s.admin.request('GET', `${KC}/keys/nope`), 404, {
      error: 'There is no key named nope associated with kc.',
    });
  });

  await t.test('keys are created from PKCS#1 or SPKI public keys, or generated', async (t) => {
    const pair1 = await keyPair(1);
    const res = await s.admin.request('POST', `${KC}/keys`, {
      name: 'k1',
      expiration_date: 'infinity',
      public_key: pkcs1(pair1.publicKeyPem),
    });
    expectAnswer(t, res, 201, { uri: `${s.url}${KC}/keys/k1` });
    t.equal(res.headers.get('location'), `${s.url}${KC}/keys/k1`);
    expectAnswer(
      t,
      await s.admin.request('GET', `${KC}/keys/k1`),
      200,
      { name: 'k1', public_key: pair1.publicKeyPem, expiration_date: 'infinity' },
      'stored as SPKI',
    );
    expectStatus(t, await (await signer(1)).request('GET', `${KC}`), 200, 'the PKCS#1 key authenticates');

    const made = expectStatus(
      t,
      await s.admin.request('POST', `${KC}/keys`, {
        name: 'k2',
        expiration_date: '2099-12-31T23:59:59Z',
        create_key: true,
      }),
      201,
    );
    t.same(Object.keys(made).sort(), ['private_key', 'uri']);
    expectStatus(
      t,
      await s.as('kc', String(made.private_key)).request('GET', KC),
      200,
      'the generated key authenticates',
    );
    t.match((await s.admin.request('GET', `${KC}/keys/k2`)).body, {
      name: 'k2',
      expiration_date: '2099-12-31T23:59:59Z',
      public_key: /^-----BEGIN PUBLIC KEY-----/,
    });
    expectStatus(
      t,
      await s.admin.request('POST', `${KC}/keys`, {
        name: 'a.b_c:d-1',
        expiration_date: 'infinity',
        public_key: (await keyPair(2)).publicKeyPem,
      }),
      201,
      'SPKI, and every name character allowed',
    );
    const names = ((await s.admin.request('GET', `${KC}/keys`)).body as Array<{ name: string }>).map((k) => k.name);
    t.same(names, ['a.b_c:d-1', 'default', 'k1', 'k2']);
  });

  await t.test('invalid key bodies are a 400; a taken name is a 409', async (t) => {
    const post = (body: Record<string, unknown>) => s.admin.request('POST', `${KC}/keys`, body);
    const pem = (await keyPair(3)).publicKeyPem;
    const cases: Array<[Record<string, unknown>, string | RegExp]> = [
      [{ expiration_date: 'infinity', public_key: pem }, "Field 'name' missing"],
      [{ name: 'k3', public_key: pem }, "Field 'expiration_date' missing"],
      [{ name: 'k3', expiration_date: '2099-01-01', public_key: pem }, DATE_MESSAGE],
      [{ name: 'k3', expiration_date: '2099-01-01T00:00:00', public_key: pem }, DATE_MESSAGE],
      [{ name: 'k3', expiration_date: '2099-13-01T00:00:00Z', public_key: pem }, DATE_MESSAGE],
      [{ name: 'k3', expiration_date: 'never', public_key: pem }, DATE_MESSAGE],
      [{ name: 'bad name', expiration_date: 'infinity', public_key: pem }, "Field 'name' invalid"],
      [{ name: 'k3', expiration_date: 'infinity' }, 'You must specify either create_key or public_key'],
      [
        { name: 'k3', expiration_date: 'infinity', public_key: pem, create_key: true },
        'You must specify either create_key or public_key, but not both',
      ],
      [{ name: 'k3', expiration_date: 'infinity', public_key: 'garbage' }, "Field 'public_key' invalid"],
      [
        { name: 'k3', expiration_date: 'infinity', public_key: (await keyPair(3)).privateKeyPem },
        "Field 'public_key' invalid",
      ],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      expectStatus(t, res, 400, JSON.stringify(body).slice(0, 80));
      t.match(res.body, { error: [message] });
    }
    expectAnswer(t, await post({ name: 'k1', expiration_date: 'infinity', public_key: pem }), 409, {
      error: "a key with the name 'k1' already exists for this actor.",
    });
    expectStatus(t, await s.admin.request('GET', `${KC}/keys/k3`), 404, 'nothing refused was created');
  });

  await t.test('keys are updated, renamed, regenerated and deleted', async (t) => {
    expectAnswer(t, await s.admin.request('PUT', `${KC}/keys/k1`, {}), 400, {
      error: ["At least one of 'name', 'expiration_date', or 'public_key' must be specified"],
    });
    expectAnswer(t, await s.admin.request('PUT', `${KC}/keys/nope`, { expiration_date: 'infinity' }), 404, {
      error: 'There is no key named nope associated with kc.',
    });
    t.match(
      expectStatus(t, await s.admin.request('PUT', `${KC}/keys/k1`, { expiration_date: '2098-01-01T00:00:00Z' }), 200),
      { expiration_date: '2098-01-01T00:00:00Z' },
    );
    t.match((await s.admin.request('GET', `${KC}/keys/k1`)).body, { expiration_date: '2098-01-01T00:00:00Z' });

    const renamed = await s.admin.request('PUT', `${KC}/keys/k1`, { name: 'k1b' });
    expectStatus(t, renamed, 201, 'rename');
    t.equal(renamed.headers.get('location'), `${s.url}${KC}/keys/k1b`);
    expectStatus(t, await s.admin.request('GET', `${KC}/keys/k1`), 404);
    t.match((await s.admin.request('GET', `${KC}/keys/k1b`)).body, {
      name: 'k1b',
      expiration_date: '2098-01-01T00:00:00Z',
      public_key: (await keyPair(1)).publicKeyPem,
    });
    expectStatus(t, await (await signer(1)).request('GET', KC), 200, 'the renamed key still authenticates');
    expectAnswer(t, await s.admin.request('PUT', `${KC}/keys/k1b`, { name: 'k2' }), 409, {
      error: "a key with the name 'k2' already exists for this actor.",
    });

    const regenerated = expectStatus(t, await s.admin.request('PUT', `${KC}/keys/k2`, { create_key: true }), 200);
    t.match(regenerated, {
      private_key: /^-----BEGIN (RSA )?PRIVATE KEY-----/,
      public_key: /^-----BEGIN PUBLIC KEY-----/,
    });
    const k2 = s.as('kc', String(regenerated.private_key));
    expectStatus(t, await k2.request('GET', KC), 200, 'the regenerated key authenticates');

    const gone = await s.admin.request('GET', `${KC}/keys/k2`);
    expectAnswer(t, await s.admin.request('DELETE', `${KC}/keys/k2`), 200, gone.body);
    expectAnswer(t, await s.admin.request('GET', `${KC}/keys/k2`), 404, {
      error: 'There is no key named k2 associated with kc.',
    });
    expectAnswer(
      t,
      await k2.request('GET', KC),
      401,
      { error: ["Invalid signature for user or client 'kc'"] },
      'a deleted key no longer authenticates',
    );
  });

  await t.test('the key that signed a request cannot change or delete itself', async (t) => {
    const used = {
      error: "The key 'default' was used to authenticate this request and cannot be modified or deleted.",
    };
    expectAnswer(t, await kc.request('DELETE', `${KC}/keys/default`), 403, used, 'client DELETE');
    expectAnswer(
      t,
      await kc.request('PUT', `${KC}/keys/default`, { expiration_date: '2090-01-01T00:00:00Z' }),
      403,
      used,
      'client PUT',
    );
    expectAnswer(t, await s.admin.request('DELETE', '/users/admin/keys/default'), 403, used, 'user DELETE');
    expectStatus(
      t,
      await (await signer(1)).request('DELETE', `${KC}/keys/default`),
      200,
      'another key of the same client may',
    );
    expectAnswer(t, await kc.request('GET', KC), 401, { error: ["Invalid signature for user or client 'kc'"] });
  });

  await t.test('expired keys are listed as expired and never authenticate', async (t) => {
    expectStatus(
      t,
      await s.admin.request('POST', `${KC}/keys`, {
        name: 'old',
        expiration_date: '2000-01-01T00:00:00Z',
        public_key: (await keyPair(3)).publicKeyPem,
      }),
      201,
    );
    t.match((await s.admin.request('GET', `${KC}/keys`)).body, [
      { name: 'a.b_c:d-1', expired: false },
      { name: 'k1b', expired: false },
      { name: 'old', expired: true },
    ]);
    expectAnswer(t, await (await signer(3)).request('GET', KC), 401, {
      error: ["Invalid signature for user or client 'kc'"],
    });

    const lone = await createClient(t, s, 'default', 'lone', 4, s.admin);
    expectStatus(t, await lone.request('GET', '/organizations/default/clients/lone'), 200);
    expectStatus(
      t,
      await s.admin.request('PUT', '/organizations/default/clients/lone/keys/default', {
        expiration_date: '2001-01-01T00:00:00Z',
      }),
      200,
    );
    expectAnswer(
      t,
      await lone.request('GET', '/organizations/default/clients/lone'),
      401,
      { error: ["Failed to authenticate as 'lone'. Ensure that your node_name and client key are correct."] },
      'no live key left',
    );
    expectStatus(
      t,
      await s.admin.request('PUT', '/organizations/default/clients/lone/keys/default', { expiration_date: 'infinity' }),
      200,
    );
    expectStatus(t, await lone.request('GET', '/organizations/default/clients/lone'), 200, 'live again');
  });

  await t.test("public_key_read_access governs who reads a client's keys (spec 4.3)", async (t) => {
    const kim = await createMember(t, s, 'default', 'kim');
    expectStatus(t, await kim.request('GET', `${KC}/keys`), 200, 'a member of users lists');
    expectStatus(t, await kim.request('GET', `${KC}/keys/k1b`), 200, 'and reads');
    expectAnswer(
      t,
      await kim.request('POST', `${KC}/keys`, { name: 'kims', expiration_date: 'infinity', create_key: true }),
      403,
      { error: ['missing update permission'] },
      'but may not add',
    );
    expectAnswer(
      t,
      await kim.request('DELETE', `${KC}/keys/k1b`),
      403,
      { error: ['missing update permission'] },
      'or delete',
    );
    const lone = s.as('lone', (await keyPair(4)).privateKeyPem);
    expectStatus(t, await lone.request('GET', `${KC}/keys`), 200, 'a member of clients lists');
    const outsider = await createUser(t, s, 'key-outsider');
    expectAnswer(t, await outsider.request('GET', `${KC}/keys`), 403, {
      error: ["'key-outsider' not associated with organization 'default'"],
    });
    const validator = s.as('default-validator', await s.keyOf('default-validator'));
    expectAnswer(t, await validator.request('GET', `${KC}/keys`), 403, keyGate, 'the validator');

    const users = ((await s.admin.request('GET', '/organizations/default/groups/users')).body as { users: string[] })
      .users;
    expectStatus(
      t,
      await s.admin.request('PUT', '/organizations/default/groups/users', {
        actors: { users: users.filter((u) => u !== 'kim') },
      }),
      200,
    );
    expectAnswer(t, await kim.request('GET', `${KC}/keys`), 403, keyGate, 'kim, out of users');
    expectAnswer(t, await kim.request('GET', `${KC}/keys/k1b`), 403, keyGate, 'kim, one key');
  });

  await t.test('user keys: the owner manages them; members of a shared org read them', async (t) => {
    const lee = await createMember(t, s, 'default', 'lee', 5);
    expectAnswer(t, await lee.request('GET', '/users/lee/keys'), 200, [
      { uri: `${s.url}/users/lee/keys/default`, name: 'default', expired: false },
    ]);
    expectAnswer(
      t,
      await lee.request('POST', '/users/lee/keys', {
        name: 'laptop',
        expiration_date: 'infinity',
        public_key: pkcs1((await keyPair(6)).publicKeyPem),
      }),
      201,
      { uri: `${s.url}/users/lee/keys/laptop` },
    );
    const laptop = s.as('lee', (await keyPair(6)).privateKeyPem);
    expectAnswer(t, await laptop.request('GET', '/users/lee/keys/laptop'), 200, {
      name: 'laptop',
      public_key: (await keyPair(6)).publicKeyPem,
      expiration_date: 'infinity',
    });
    expectStatus(t, await s.admin.request('GET', '/users/lee/keys'), 200, 'a member of a shared org reads');
    expectAnswer(
      t,
      await s.admin.request('POST', '/users/lee/keys', { name: 'x', expiration_date: 'infinity', create_key: true }),
      403,
      { error: ['missing update permission'] },
      'but may not add',
    );
    const outsider = s.as('key-outsider', (await keyPair(0)).privateKeyPem);
    expectAnswer(t, await outsider.request('GET', '/users/lee/keys'), 403, { error: ['missing read permission'] });
    expectAnswer(t, await outsider.request('GET', '/users/lee/keys/default'), 403, {
      error: ['missing read permission'],
    });
    expectAnswer(t, await lee.request('GET', '/users/lee/keys/nope'), 404, {
      error: 'There is no key named nope associated with lee.',
    });

    expectStatus(
      t,
      await laptop.request('PUT', '/users/lee/keys/default', { expiration_date: '2001-01-01T00:00:00Z' }),
      200,
      'expire the other key',
    );
    expectAnswer(t, await lee.request('GET', '/users/lee'), 401, {
      error: ["Invalid signature for user or client 'lee'"],
    });
    expectAnswer(t, await laptop.request('DELETE', '/users/lee/keys/default'), 200, {
      name: 'default',
      public_key: (await keyPair(5)).publicKeyPem,
      expiration_date: '2001-01-01T00:00:00Z',
    });
    t.match((await laptop.request('GET', '/users/lee/keys')).body, [{ name: 'laptop' }]);
  });

  await t.test('org-scoped user keys are readable through public_key_read_access only', async (t) => {
    const path = '/organizations/default/users/lee/keys';
    const lone = s.as('lone', (await keyPair(4)).privateKeyPem);
    expectAnswer(
      t,
      await lone.request('GET', path),
      200,
      [{ uri: `${s.url}/users/lee/keys/laptop`, name: 'laptop', expired: false }],
      'a client of the org',
    );
    expectAnswer(t, await lone.request('GET', `${path}/laptop`), 200, {
      name: 'laptop',
      public_key: (await keyPair(6)).publicKeyPem,
      expiration_date: 'infinity',
    });
    const kim = s.as('kim', (await keyPair(0)).privateKeyPem);
    expectAnswer(t, await kim.request('GET', path), 403, keyGate, 'a member outside users');
    expectAnswer(t, await lone.request('GET', '/organizations/default/users/key-outsider/keys'), 404, {
      error: 'Cannot find a user key-outsider in organization default',
    });
    expectAnswer(t, await lone.request('GET', `${path}/nope`), 404, {
      error: 'There is no key named nope associated with lee.',
    });
    t.equal(
      (await s.admin.request('POST', path, { name: 'x', expiration_date: 'infinity', create_key: true })).status,
      405,
      'GET only',
    );
  });
});
