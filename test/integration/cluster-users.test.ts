// Two servers on one Redis share accounts and memberships: an account written through the server holding the
// global partition signs requests on the other, its key changes and deletion reach the organizations the other
// serves, and the memberships those organizations hold are listed by the first. Each request goes to the server
// that owns what it touches.
import t, { type Test } from 'tap';
import type { Ref } from 'nact';
import { ask } from '../../actors/system.js';
import { clusterStatusSchema, type ClusterStatus } from '../../src/api/status-schema.js';
import { preferredOwner } from '../../src/cluster/ownership.js';
import { USERS } from '../../src/store/collections.js';
import { ALL_PARTITIONS, partitionOf, type Partition } from '../../src/store/partitions.js';
import { associate, createOrg, createUser, expectStatus, keyPair } from '../support/api-fixtures.js';
import { until } from '../support/deadline.js';
import { startTestServer, type TestServer } from '../support/server.js';

const WAIT_MS = 20_000;

async function clusterOf(s: TestServer): Promise<ClusterStatus | undefined> {
  const body: unknown = await (await fetch(`${s.url}/_status`)).json();
  if (body === null || typeof body !== 'object' || !('cluster' in body)) return undefined;
  const parsed = clusterStatusSchema.safeParse(body.cluster);
  return parsed.success ? parsed.data : undefined;
}

/** Waits until each server holds the partitions rendezvous hashing gives it; answers who should own what. */
async function settled(a: TestServer, b: TestServer): Promise<(p: Partition) => TestServer> {
  return until(
    'the two servers to split the partitions',
    async () => {
      const [sa, sb] = await Promise.all([clusterOf(a), clusterOf(b)]);
      if (!sa || !sb || sa.members.length !== 2) return undefined;
      const ids = [sa.member, sb.member];
      const planned = (id: string) => ALL_PARTITIONS.filter((p) => preferredOwner(p, ids) === id).length;
      if (sa.partitions !== planned(sa.member) || sb.partitions !== planned(sb.member)) return undefined;
      return (p: Partition) => (preferredOwner(p, ids) === sa.member ? a : b);
    },
    WAIT_MS,
  );
}

const has = (body: unknown, name: string) => JSON.stringify(body).includes(`"${name}"`);

/** Two servers on one Redis, split as they will stay, and an organization served by the one without the accounts. */
async function twoServers(t: Test): Promise<{ global: TestServer; other: TestServer; org: string }> {
  const first = await startTestServer(t, 'redis');
  const second = await first.beside();
  const ownerOf = await settled(first, second);
  const global = ownerOf('global');
  const other = global === first ? second : first;
  let org = 'default';
  for (let i = 0; ownerOf(partitionOf(org)) !== other; i++) org = `remote-${i}`;
  if (org !== 'default') await createOrg(t, other, org);
  await until('the organization to be served by the other server', () => other.running.system.org(org), WAIT_MS);
  return { global, other, org };
}

t.test('accounts and memberships are shared by the servers on one Redis', async (t) => {
  const { global, other, org } = await twoServers(t);
  t.notOk(global.running.system.orgNames().includes(org), 'the server holding the accounts does not serve it');

  await createUser(t, global, 'alice', 1);
  const aliceThere = other.as('alice', (await keyPair(1)).privateKeyPem);
  await until(
    'alice to sign requests on the other server',
    async () => ((await aliceThere.request('GET', '/users/alice')).status === 200 ? true : undefined),
    WAIT_MS,
  );
  t.pass('an account created through one server signs requests on the other');

  await associate(t, other, org, 'alice');
  const orgs = await until(
    "alice's membership to reach the server holding the accounts",
    async () => {
      const res = await global.pivotal.request('GET', '/users/alice/organizations');
      return res.status === 200 && has(res.body, org) ? res.body : undefined;
    },
    WAIT_MS,
  );
  t.ok(has(orgs, org), 'GET /users/NAME/organizations lists an organization another server serves');

  expectStatus(
    t,
    await global.pivotal.request('POST', '/users/alice/keys', {
      name: 'laptop',
      expiration_date: 'infinity',
      public_key: (await keyPair(2)).publicKeyPem,
    }),
    201,
    'a key added',
  );
  const laptopThere = other.as('alice', (await keyPair(2)).privateKeyPem);
  await until(
    'the new key to sign on the other server',
    async () => ((await laptopThere.request('GET', `/organizations/${org}/users`)).status === 200 ? true : undefined),
    WAIT_MS,
  );
  t.pass('a key added through one server signs on the other');

  expectStatus(t, await global.pivotal.request('DELETE', '/users/alice'), 200, 'alice deleted');
  await until(
    "alice's membership to be dropped by the organization's server",
    async () => {
      const res = await other.pivotal.request('GET', `/organizations/${org}/users`);
      return res.status === 200 && !has(res.body, 'alice') ? true : undefined;
    },
    WAIT_MS,
  );
  t.pass('a deletion through one server drops the membership in an organization the other serves');
  await until(
    'alice to be refused on the other server',
    async () => ((await laptopThere.request('GET', '/users/pivotal')).status === 401 ? true : undefined),
    WAIT_MS,
  );
  t.pass('a deleted account no longer signs on the other server');
});

t.test('an account change whose hint was lost is found by the next reload', async (t) => {
  const { global, other, org } = await twoServers(t);

  // Written straight to the store, as if the hint had been lost on the way.
  const template = await until(
    "pivotal's account in the store",
    async () => (await global.running.system.store.get(USERS, 'admin')) as Record<string, unknown> | undefined,
    WAIT_MS,
  );
  const { publicKeyPem, privateKeyPem } = await keyPair(3);
  await global.running.system.store.put(USERS, 'quiet', {
    ...template,
    username: 'quiet',
    email: 'quiet@example.com',
    keys: { default: { public_key: publicKeyPem, expiration_date: 'infinity' } },
  });
  // A request about one of the other server's organizations: that server checks the signature (one about users
  // would be passed on to the server holding the accounts).
  const quiet = other.as('quiet', privateKeyPem);
  const path = `/organizations/${org}/nodes`;
  expectStatus(t, await quiet.request('GET', path), 401, 'not known on the other server before a reload');

  const { users } = other.running.system;
  t.equal(await ask(users, (replyTo: Ref<boolean>) => ({ type: 'reload' as const, replyTo })), true, 'reloaded');
  const after = await quiet.request('GET', path);
  expectStatus(t, after, 403, 'known after it: signed in, though not a member');
  t.match(after.body, { error: [/not associated/] });
});

t.test('a rename through one server is applied by the organizations the other serves', async (t) => {
  const { global, other, org } = await twoServers(t);
  await createUser(t, global, 'bob', 4);
  await until('bob to be known on the other server', () => other.running.system.principals.user('bob'), WAIT_MS);
  await associate(t, other, org, 'bob');
  expectStatus(t, await global.pivotal.request('PUT', '/users/bob', { username: 'robert' }), 201, 'bob renamed');
  const members = await until(
    'the membership to follow the new name',
    async () => {
      const res = await other.pivotal.request('GET', `/organizations/${org}/users`);
      return res.status === 200 && has(res.body, 'robert') ? res.body : undefined;
    },
    WAIT_MS,
  );
  t.notOk(has(members, 'bob'), 'the old name is gone from the organization');
  const robert = other.as('robert', (await keyPair(4)).privateKeyPem);
  expectStatus(
    t,
    await robert.request('GET', `/organizations/${org}/users`),
    200,
    'the new name signs there as a member',
  );
});
