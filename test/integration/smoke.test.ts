import t from 'tap';
import { startTestServer } from '../support/server.js';

t.test('core flows on the file store', async (t) => {
  const s = await startTestServer(t, 'file');
  const org = await s.admin.request('GET', '/organizations/default');
  t.equal(org.status, 200, JSON.stringify(org.body));
  const clients = await s.admin.request('POST', '/organizations/default/clients', { name: 'web1', create_key: true });
  t.equal(clients.status, 201, JSON.stringify(clients.body));
  const key = (clients.body as { chef_key: { private_key: string } }).chef_key.private_key;
  const web1 = s.as('web1', key);
  const self = await web1.request('GET', '/organizations/default/clients/web1');
  t.equal(self.status, 200, JSON.stringify(self.body));
  const orgs = await s.pivotal.request('POST', '/organizations', { name: 'acme', full_name: 'Acme Inc' });
  t.equal(orgs.status, 201, JSON.stringify(orgs.body));
  const users = await s.admin.request('GET', '/users');
  t.equal(users.status, 403, JSON.stringify(users.body));
  const s2 = await s.restart();
  const again = await s2.as('web1', key).request('GET', '/organizations/default/clients/web1');
  t.equal(again.status, 200, JSON.stringify(again.body));
  const acme = await s2.pivotal.request('GET', '/organizations/acme');
  t.equal(acme.status, 200);
});
