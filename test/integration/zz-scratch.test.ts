import t from 'tap';
import { createClient, createMember, eachStore, expectStatus, keyPair } from '../support/api-fixtures.js';
import { startTestServer } from '../support/server.js';

t.test('renames', async (t) => {
  const s = await startTestServer(t, 'file');
  const gina = await createMember(t, s, 'default', 'gina');
  const r = await s.pivotal.request('PUT', '/users/gina', { username: 'gina2' });
  console.log(r.status, r.body);
  const g2 = s.as('gina2', (await keyPair(0)).privateKeyPem);
  console.log((await g2.request('GET', '/organizations/default')).body);
  console.log((await s.pivotal.request('GET', '/organizations/default/users')).body);
  console.log((await s.pivotal.request('GET', '/organizations/default/groups/users')).body);
  const web = await createClient(t, s, 'default', 'web1', 0, s.admin);
  console.log((await s.admin.request('PUT', '/organizations/default/clients/web1', { name: 'web2' })).status);
  const w2 = s.as('web2', (await keyPair(0)).privateKeyPem);
  console.log((await w2.request('GET', '/organizations/default/clients/web2')).body);
  console.log((await s.admin.request('GET', '/organizations/default/clients/web2')).body);
});
