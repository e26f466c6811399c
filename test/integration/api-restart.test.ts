// A restart on the same store loses nothing (spec 1, 5): organizations, users, clients, keys and group
// memberships all come back, every key still authenticates, and the first-start files are left alone.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { ApiClient } from '../../src/auth/api-client.js';
import {
  createClient,
  createMember,
  createOrg,
  eachStore,
  expectAnswer,
  expectStatus,
  keyPair,
} from '../support/api-fixtures.js';
import type { TestServer } from '../support/server.js';

const ACME = '/organizations/acme';

async function firstStartFiles(s: TestServer): Promise<Record<string, { text: string; mtimeMs: number }>> {
  const out: Record<string, { text: string; mtimeMs: number }> = {};
  for (const name of ['pivotal.pem', 'admin.pem', 'default-validator.pem', 'config.rb']) {
    const path = join(s.dataDir, name);
    out[name] = { text: await readFile(path, 'utf8'), mtimeMs: (await stat(path)).mtimeMs };
  }
  return out;
}

eachStore(t, async (t, s) => {
  // Before: an organization with a member in a nested group, clients with several keys, a server-admin.
  const acmeValidatorKey = await createOrg(t, s, 'acme');
  await createMember(t, s, 'acme', 'ruth', 0);
  expectStatus(t, await s.pivotal.request('POST', '/server-admins', { username: 'ruth' }), 200);
  expectStatus(
    t,
    await s.pivotal.request('POST', '/users/ruth/keys', {
      name: 'second',
      expiration_date: '2099-01-01T00:00:00Z',
      public_key: (await keyPair(1)).publicKeyPem,
    }),
    201,
  );
  await createClient(t, s, 'acme', 'db1', 2);
  expectStatus(
    t,
    await s.pivotal.request('POST', `${ACME}/clients/db1/keys`, {
      name: 'rotated',
      expiration_date: 'infinity',
      public_key: (await keyPair(3)).publicKeyPem,
    }),
    201,
  );
  expectStatus(
    t,
    await s.pivotal.request('POST', `${ACME}/clients/db1/keys`, {
      name: 'expired',
      expiration_date: '2000-01-01T00:00:00Z',
      public_key: (await keyPair(4)).publicKeyPem,
    }),
    201,
  );
  const validatorMade = expectStatus(
    t,
    await s
      .as('acme-validator', acmeValidatorKey)
      .request('POST', `${ACME}/clients`, { name: 'app1', create_key: true }),
    201,
  );
  const app1Key = String((validatorMade.chef_key as Record<string, unknown>).private_key);
  expectStatus(t, await s.pivotal.request('POST', `${ACME}/groups`, { id: 'ops' }), 201);
  expectStatus(t, await s.pivotal.request('POST', `${ACME}/groups`, { id: 'oncall' }), 201);
  expectStatus(
    t,
    await s.pivotal.request('PUT', `${ACME}/groups/oncall`, { actors: { users: ['ruth'], clients: ['db1'] } }),
    200,
  );
  expectStatus(t, await s.pivotal.request('PUT', `${ACME}/groups/ops`, { actors: { groups: ['oncall'] } }), 200);
  expectStatus(t, await s.pivotal.request('PUT', `${ACME}/groups/admins`, { actors: { groups: ['ops'] } }), 200);
  expectStatus(t, await s.pivotal.request('PUT', `${ACME}`, { name: 'acme', full_name: 'Acme Renamed' }), 200);
  expectStatus(t, await s.pivotal.request('POST', '/organizations', { name: 'gone', full_name: 'Gone' }), 201);
  expectStatus(t, await s.pivotal.request('DELETE', '/organizations/gone'), 200);

  const read = async (client: ApiClient, path: string) => expectStatus(t, await client.request('GET', path), 200, path);
  const snapshot = async (srv: TestServer) => ({
    org: await read(srv.pivotal, ACME),
    orgs: await read(srv.pivotal, '/organizations'),
    clients: await read(srv.pivotal, `${ACME}/clients`),
    groups: await read(srv.pivotal, `${ACME}/groups`),
    oncall: await read(srv.pivotal, `${ACME}/groups/oncall`),
    ops: await read(srv.pivotal, `${ACME}/groups/ops`),
    admins: await read(srv.pivotal, `${ACME}/groups/admins`),
    members: (await srv.pivotal.request('GET', `${ACME}/users`)).body,
    ruth: await read(srv.pivotal, '/users/ruth'),
    ruthKeys: (await srv.pivotal.request('GET', '/users/ruth/keys')).body,
    ruthOrgs: (await srv.pivotal.request('GET', '/users/ruth/organizations')).body,
    db1Keys: (await srv.pivotal.request('GET', `${ACME}/clients/db1/keys`)).body,
    serverAdmins: (await srv.pivotal.request('GET', '/server-admins')).body,
    users: await read(srv.pivotal, '/users'),
  });
  const before = await snapshot(s);
  const filesBefore = await firstStartFiles(s);

  const s2 = await s.restart();

  await t.test('everything is still there', async (t) => {
    const after = await snapshot(s2);
    // URIs carry the port, which a restart changes.
    const port = (v: unknown) =>
      JSON.parse(JSON.stringify(v).replaceAll(s.url, 'URL').replaceAll(s2.url, 'URL')) as unknown;
    for (const key of Object.keys(before) as Array<keyof typeof before>)
      t.same(port(after[key]), port(before[key]), key);
    t.match(after.org, { name: 'acme', full_name: 'Acme Renamed' });
    t.notOk('gone' in after.orgs, 'a deleted organization stays deleted');
    expectAnswer(t, await s2.pivotal.request('GET', '/organizations/gone'), 404, {
      error: ["organization 'gone' does not exist."],
    });
    t.same(after.oncall.users, ['ruth']);
    t.same(after.ops.groups, ['oncall']);
    t.same(after.serverAdmins, ['pivotal', 'ruth']);
  });

  await t.test('every key still authenticates, and expired ones still do not', async (t) => {
    const keys: Array<[string, string, string]> = [
      ['pivotal', await s2.keyOf('pivotal'), '/users/pivotal'],
      ['admin', await s2.keyOf('admin'), '/organizations/default'],
      ['ruth', (await keyPair(0)).privateKeyPem, `${ACME}/groups/admins`],
      ['ruth', (await keyPair(1)).privateKeyPem, '/users'],
      ['db1', (await keyPair(2)).privateKeyPem, `${ACME}/clients/db1`],
      ['db1', (await keyPair(3)).privateKeyPem, `${ACME}/clients/db1/keys`],
      ['app1', app1Key, `${ACME}/clients/app1`],
    ];
    for (const [who, key, path] of keys)
      expectStatus(t, await s2.as(who, key).request('GET', path), 200, `${who} on ${path}`);
    expectStatus(
      t,
      await s2
        .as('default-validator', await s2.keyOf('default-validator'))
        .request('POST', '/organizations/default/clients', { name: 'after-restart' }),
      201,
      'default validator',
    );
    expectStatus(
      t,
      await s2.as('acme-validator', acmeValidatorKey).request('POST', `${ACME}/clients`, { name: 'app2' }),
      201,
      'acme validator',
    );
    expectAnswer(
      t,
      await s2.as('db1', (await keyPair(4)).privateKeyPem).request('GET', `${ACME}/clients/db1`),
      401,
      { error: ["Invalid signature for user or client 'db1'"] },
      'expired key',
    );
    expectAnswer(
      t,
      await s2.as('acme-validator', acmeValidatorKey).request('GET', `${ACME}/clients`),
      403,
      { error: ['missing read permission'] },
      'the validator is still only a validator',
    );
  });

  await t.test('the second start rewrites none of the first-start files', async (t) => {
    t.same(s2.running.setupFiles, [], 'no files written');
    t.same(await firstStartFiles(s2), filesBefore, 'same contents and modification times');
  });

  await t.test('changes after the restart persist too', async (t) => {
    expectStatus(t, await s2.pivotal.request('PUT', `${ACME}/groups/oncall`, { actors: { clients: [] } }), 200);
    const s3 = await s2.restart();
    t.match((await s3.pivotal.request('GET', `${ACME}/groups/oncall`)).body, { users: ['ruth'], clients: [] });
    expectStatus(t, await s3.pivotal.request('GET', '/organizations/default/clients/after-restart'), 200);
    t.same(s3.running.setupFiles, []);

    // Members leave from the middle, join at the end, and a list is put back in a new order: each survives.
    const clientsGroup = async (srv: TestServer) => (await read(srv.pivotal, `${ACME}/groups/clients`)).clients;
    const listed = (await clientsGroup(s3)) as string[];
    t.same(listed.slice(-3), ['db1', 'app1', 'app2'], 'the clients group lists clients as they came');
    expectStatus(t, await s3.pivotal.request('DELETE', `${ACME}/clients/app1`), 200);
    await createClient(t, s3, 'acme', 'app3', 5);
    expectStatus(
      t,
      await s3.pivotal.request('PUT', `${ACME}/groups/oncall`, {
        actors: { users: ['ruth'], clients: ['app3', 'db1'] },
      }),
      200,
    );
    const s4 = await s3.restart();
    t.same(await clientsGroup(s4), [...listed.filter((c) => c !== 'app1'), 'app3']);
    t.match((await s4.pivotal.request('GET', `${ACME}/groups/oncall`)).body, { clients: ['app3', 'db1'] });
  });
});
