// /organizations/ORG/clients over real HTTP (reference 4.2; spec 2.2, 5.3): creation in both API versions,
// the clients group, the validator's narrow rights, edits, renames, deletion and name rules.
import { createPublicKey } from 'node:crypto';
import t from 'tap';
import { createMember, eachStore, expectAnswer, expectStatus, keyPair } from '../support/api-fixtures.js';

const CLIENTS = '/organizations/default/clients';
const clientJson = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  clientname: name,
  validator: false,
  orgname: 'default',
  json_class: 'Chef::ApiClient',
  chef_type: 'client',
  ...extra,
});
const missingRead = { error: ['missing read permission'] };

eachStore(t, async (t, s) => {
  const clientsGroup = async () =>
    ((await s.pivotal.request('GET', '/organizations/default/groups/clients')).body as { clients: string[] }).clients;

  await t.test('API v1 create_key: 201 with chef_key; the client joins clients and signs with its key', async (t) => {
    const res = await s.admin.request('POST', CLIENTS, { name: 'web1', create_key: true });
    const body = expectStatus(t, res, 201);
    t.equal(res.headers.get('location'), `${s.url}${CLIENTS}/web1`);
    t.same(Object.keys(body).sort(), ['chef_key', 'uri']);
    t.equal(body.uri, `${s.url}${CLIENTS}/web1`);
    const key = body.chef_key as Record<string, string>;
    t.match(key, {
      name: 'default',
      expiration_date: 'infinity',
      uri: `${s.url}${CLIENTS}/web1/keys/default`,
      public_key: /^-----BEGIN PUBLIC KEY-----/,
      private_key: /^-----BEGIN (RSA )?PRIVATE KEY-----/,
    });
    t.ok((await clientsGroup()).includes('web1'), 'in the clients group');
    const web1 = s.as('web1', String(key.private_key));
    expectAnswer(t, await web1.request('GET', `${CLIENTS}/web1`), 200, clientJson('web1'), 'reads itself');
    expectAnswer(t, await web1.request('GET', CLIENTS), 403, missingRead, 'clients may not list clients (spec 5)');
  });

  await t.test('API v1 with public_key or with neither; v0 always has keys', async (t) => {
    const pair = await keyPair(0);
    const given = expectStatus(
      t,
      await s.admin.request('POST', CLIENTS, { clientname: 'web2', public_key: pair.publicKeyPem }),
      201,
    );
    t.same(given, {
      uri: `${s.url}${CLIENTS}/web2`,
      chef_key: {
        name: 'default',
        public_key: pair.publicKeyPem,
        expiration_date: 'infinity',
        uri: `${s.url}${CLIENTS}/web2/keys/default`,
      },
    });
    expectStatus(
      t,
      await s.as('web2', pair.privateKeyPem).request('GET', `${CLIENTS}/web2`),
      200,
      'signs with the given key',
    );
    const rsa = createPublicKey((await keyPair(1)).publicKeyPem)
      .export({ type: 'pkcs1', format: 'pem' })
      .toString();
    const fromPkcs1 = expectStatus(
      t,
      await s.admin.request('POST', CLIENTS, { name: 'pkcs1', public_key: rsa }),
      201,
      'a PKCS#1 public key',
    );
    t.match(fromPkcs1.chef_key, { public_key: (await keyPair(1)).publicKeyPem }, 'kept as SPKI');
    expectStatus(t, await s.as('pkcs1', (await keyPair(1)).privateKeyPem).request('GET', `${CLIENTS}/pkcs1`), 200);
    expectAnswer(t, await s.admin.request('DELETE', `${CLIENTS}/pkcs1`), 200, clientJson('pkcs1'));
    expectAnswer(t, await s.admin.request('POST', CLIENTS, { name: 'badkey', public_key: 'not a key' }), 400, {
      error: ["Field 'public_key' invalid"],
    });
    expectAnswer(t, await s.admin.request('POST', CLIENTS, { name: 'keyless' }), 201, {
      uri: `${s.url}${CLIENTS}/keyless`,
    });
    expectAnswer(t, await s.admin.request('GET', `${CLIENTS}/keyless/keys`), 200, []);

    const v0 = s.as('admin', await s.keyOf('admin'), { apiVersion: 0 });
    const old = expectStatus(t, await v0.request('POST', CLIENTS, { name: 'old1' }), 201);
    t.same(Object.keys(old).sort(), ['private_key', 'public_key', 'uri']);
    t.match(old, { public_key: /^-----BEGIN PUBLIC KEY-----/, private_key: /^-----BEGIN (RSA )?PRIVATE KEY-----/ });
    expectAnswer(
      t,
      await v0.request('GET', `${CLIENTS}/old1`),
      200,
      clientJson('old1', { public_key: old.public_key }),
      'v0 shows the public key',
    );
    expectAnswer(t, await s.admin.request('GET', `${CLIENTS}/old1`), 200, clientJson('old1'), 'v1 does not');
    expectStatus(
      t,
      await s.as('old1', String(old.private_key), { apiVersion: 0 }).request('GET', `${CLIENTS}/old1`),
      200,
      'the v0 key authenticates',
    );
    expectAnswer(
      t,
      await s.admin.request('POST', CLIENTS, { name: 'both', create_key: true, public_key: pair.publicKeyPem }),
      400,
      { error: ['You must specify either create_key or public_key, but not both'] },
    );
  });

  await t.test('list, get, and the 404s', async (t) => {
    const list = expectStatus(t, await s.admin.request('GET', CLIENTS), 200);
    t.same(Object.keys(list).sort(), ['default-validator', 'keyless', 'old1', 'web1', 'web2']);
    t.equal(list.web1, `${s.url}${CLIENTS}/web1`);
    expectAnswer(
      t,
      await s.admin.request('GET', `${CLIENTS}/default-validator`),
      200,
      clientJson('default-validator', { validator: true }),
    );
    const missing = { error: ['Cannot load client nope'] };
    expectAnswer(t, await s.admin.request('GET', `${CLIENTS}/nope`), 404, missing, 'GET');
    expectAnswer(t, await s.admin.request('PUT', `${CLIENTS}/nope`, { name: 'nope' }), 404, missing, 'PUT');
    expectAnswer(t, await s.admin.request('DELETE', `${CLIENTS}/nope`), 404, missing, 'DELETE');
    expectAnswer(t, await s.admin.request('GET', `${CLIENTS}/nope/keys`), 404, missing, 'keys');
    const member = await createMember(t, s, 'default', 'clara');
    expectStatus(t, await member.request('GET', CLIENTS), 200, 'members of users list clients (spec 5)');
    expectAnswer(
      t,
      await member.request('POST', CLIENTS, { name: 'by-member' }),
      403,
      { error: ['missing create permission'] },
      'but do not create them',
    );
  });

  await t.test('names are validated and taken names are a 409', async (t) => {
    for (const name of ['bad name', 'slash/y', 'star*', '']) {
      const res = await s.admin.request('POST', CLIENTS, { name });
      expectStatus(t, res, 400, JSON.stringify(name));
      const [message = ''] = (res.body as { error: string[] }).error;
      t.ok(message.startsWith(`Invalid client name '${name}' using regex: `), message);
    }
    expectAnswer(t, await s.admin.request('POST', CLIENTS, {}), 400, { error: ["Field 'name' missing"] });
    expectAnswer(t, await s.admin.request('POST', CLIENTS, { name: 'a', clientname: 'b' }), 400, {
      error: ['name and clientname must match'],
    });
    expectStatus(
      t,
      await s.admin.request('POST', CLIENTS, { name: 'Dots.And_under-score9' }),
      201,
      'letters, digits, dot, dash, underscore',
    );
    expectAnswer(t, await s.admin.request('POST', CLIENTS, { name: 'web1' }), 409, {
      error: ['Client already exists'],
    });
    expectAnswer(t, await s.admin.request('POST', CLIENTS, { name: 'default-validator', validator: true }), 409, {
      error: ['Client already exists'],
    });
  });

  await t.test('PUT updates and renames; the renamed client keeps its key, group and rights', async (t) => {
    expectAnswer(
      t,
      await s.admin.request('PUT', `${CLIENTS}/keyless`, { name: 'keyless', validator: true }),
      200,
      clientJson('keyless', { validator: true }),
    );
    expectAnswer(
      t,
      await s.admin.request('PUT', `${CLIENTS}/web2`, { public_key: (await keyPair(1)).publicKeyPem }),
      400,
      { error: ['Since Server API v1, all keys must be updated via the keys endpoint. '] },
    );
    expectAnswer(t, await s.admin.request('PUT', `${CLIENTS}/web2`, { name: 'web1' }), 409, {
      error: ['Client already exists'],
    });
    expectAnswer(t, await s.admin.request('PUT', `${CLIENTS}/web2`, { name: 'bad name' }), 400, {
      error: ["Field 'name' invalid"],
    });

    const res = await s.admin.request('PUT', `${CLIENTS}/web2`, { name: 'web3' });
    expectAnswer(t, res, 201, clientJson('web3'));
    t.equal(res.headers.get('location'), `${s.url}${CLIENTS}/web3`);
    expectAnswer(t, await s.admin.request('GET', `${CLIENTS}/web2`), 404, { error: ['Cannot load client web2'] });
    const web3 = s.as('web3', (await keyPair(0)).privateKeyPem);
    expectAnswer(
      t,
      await web3.request('GET', `${CLIENTS}/web3`),
      200,
      clientJson('web3'),
      'signs and reads itself under the new name',
    );
    const members = await clientsGroup();
    t.ok(members.includes('web3') && !members.includes('web2'), 'the clients group follows');
    expectAnswer(
      t,
      await s.as('web2', (await keyPair(0)).privateKeyPem).request('GET', `${CLIENTS}/web3`),
      401,
      { error: ["Failed to authenticate as 'web2'. Ensure that your node_name and client key are correct."] },
      'the old name is gone',
    );
  });

  await t.test('DELETE answers the client and ends it', async (t) => {
    expectAnswer(t, await s.admin.request('DELETE', `${CLIENTS}/web3`), 200, clientJson('web3'));
    expectStatus(t, await s.admin.request('GET', `${CLIENTS}/web3`), 404);
    t.notOk((await clientsGroup()).includes('web3'), 'left the clients group');
    expectAnswer(
      t,
      await s.as('web3', (await keyPair(0)).privateKeyPem).request('GET', '/organizations/default/clients/web3'),
      401,
      { error: ["Failed to authenticate as 'web3'. Ensure that your node_name and client key are correct."] },
    );
    const again = expectStatus(
      t,
      await s.admin.request('POST', CLIENTS, { name: 'web3', public_key: (await keyPair(2)).publicKeyPem }),
      201,
      'the name is free',
    );
    t.ok(again.chef_key);
    expectAnswer(
      t,
      await s.as('web3', (await keyPair(2)).privateKeyPem).request('GET', '/organizations/default/clients/web3'),
      200,
      clientJson('web3'),
    );
  });

  await t.test('the validator registers clients and nothing else (spec 5.3)', async (t) => {
    const validator = s.as('default-validator', await s.keyOf('default-validator'));
    const made = expectStatus(
      t,
      await validator.request('POST', CLIENTS, { name: 'node1', create_key: true }),
      201,
      'registers a client',
    );
    t.ok((await clientsGroup()).includes('node1'), 'which joins clients');
    const node1 = s.as('node1', String((made.chef_key as Record<string, string>).private_key));
    expectStatus(t, await node1.request('GET', `${CLIENTS}/node1`), 200, 'the new client reads itself');

    expectAnswer(t, await validator.request('GET', CLIENTS), 403, missingRead, 'list clients');
    expectAnswer(t, await validator.request('GET', `${CLIENTS}/node1`), 403, missingRead, 'read the client it made');
    expectAnswer(t, await validator.request('PUT', `${CLIENTS}/node1`, { name: 'node1' }), 403, {
      error: ['missing update permission'],
    });
    expectAnswer(t, await validator.request('DELETE', `${CLIENTS}/node1`), 403, {
      error: ['missing delete permission'],
    });
    expectAnswer(t, await validator.request('GET', `${CLIENTS}/default-validator`), 403, missingRead, 'read itself');
    expectAnswer(t, await validator.request('GET', '/organizations/default/groups'), 403, missingRead, 'list groups');
    expectAnswer(
      t,
      await validator.request('GET', '/organizations/default/containers/nodes'),
      403,
      missingRead,
      'read the nodes container',
    );
    expectAnswer(t, await validator.request('GET', '/organizations/default/nodes'), 403, missingRead, 'list nodes');
    expectAnswer(
      t,
      await validator.request('GET', '/organizations/default'),
      403,
      missingRead,
      'read the organization',
    );
    expectAnswer(
      t,
      await validator.request('POST', CLIENTS, { name: 'validator2', validator: true }),
      403,
      { error: ['missing create permission'] },
      'create a validator',
    );
    expectStatus(t, await s.admin.request('GET', `${CLIENTS}/validator2`), 404, 'nothing refused was created');
  });
});
