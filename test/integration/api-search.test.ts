// The search endpoint over real HTTP: the query language, paging, freshness after update and delete,
// read-permission filtering, and the index surviving a restart, on both stores.
import t from 'tap';
import { STORE_KINDS, startTestServer } from '../support/server.js';

const ORG = '/organizations/default';
type Page = { total: number; start: number; rows: Array<{ name: string }> };
const names = (b: unknown) => (b as Page).rows.map((r) => r.name).sort();

for (const kind of STORE_KINDS) {
  t.test(`search on the ${kind} store`, async (t) => {
    let s = await startTestServer(t, kind);
    const node = (name: string, env: string, runList: string[], automatic: Record<string, unknown>) =>
      s.admin.request('POST', `${ORG}/nodes`, {
        name,
        chef_environment: env,
        run_list: runList,
        automatic,
        normal: { push_jobs: { whitelist: { 'chef-client': 'chef-client' } } },
      });
    t.equal(
      (
        await node('web1', 'prod', ['role[web]', 'nginx'], {
          platform: 'ubuntu',
          languages: { ruby: { version: '3.2.1' } },
          cpu: { total: 4 },
        })
      ).status,
      201,
    );
    t.equal((await node('web2', 'staging', ['role[web]'], { platform: 'debian', cpu: { total: 8 } })).status, 201);
    t.equal(
      (await node('db1', 'prod', ['role[db]', 'recipe[postgres::server]'], { platform: 'ubuntu', cpu: { total: 16 } }))
        .status,
      201,
    );
    const q = async (query: string, extra = '') =>
      s.admin.request('GET', `${ORG}/search/node?q=${encodeURIComponent(query)}${extra}`);

    t.same(names((await q('role:web')).body), ['web1', 'web2']);
    t.same(names((await q('role:web AND chef_environment:prod')).body), ['web1']);
    t.same(names((await q('recipe:nginx OR recipe:postgres::server')).body), ['db1', 'web1']);
    t.same(names((await q('platform:ubu*')).body), ['db1', 'web1']);
    t.same(names((await q('name:web?')).body), ['web1', 'web2']);
    t.same(names((await q('NOT role:web')).body), ['db1']);
    t.same(names((await q('cpu_total:[5 TO 16]')).body), ['db1', 'web2']);
    t.same(names((await q('languages_ruby_version:3.2.1')).body), ['web1']);
    t.same(names((await q('push_jobs_whitelist_chef-client:chef-client')).body), ['db1', 'web1', 'web2']);
    const page = (await q('*:*', '&start=1&rows=1')).body as Page;
    t.equal(page.total, 3);
    t.equal(page.start, 1);
    t.equal(page.rows.length, 1);
    const bad = await q('role:web AND (');
    t.equal(bad.status, 400);
    t.match(bad.body, { error: [/position/] });

    t.equal(
      (
        await s.admin.request('PUT', `${ORG}/nodes/web2`, {
          name: 'web2',
          chef_environment: 'prod',
          run_list: ['role[db]'],
        })
      ).status,
      200,
    );
    t.same(names((await q('role:web')).body), ['web1'], 'an updated node no longer matches its old values');
    t.same(names((await q('role:db')).body), ['db1', 'web2']);
    t.equal((await s.admin.request('DELETE', `${ORG}/nodes/db1`)).status, 200);
    t.same(names((await q('role:db')).body), ['web2'], 'a deleted node is gone from results');

    // A node the requester cannot read is left out of the results and the total.
    t.equal(
      (await s.admin.request('PUT', `${ORG}/nodes/web2/_acl/read`, { read: { actors: ['admin'], groups: ['admins'] } }))
        .status,
      200,
    );
    const client = await s.admin.request('POST', `${ORG}/clients`, { name: 'reader', create_key: true });
    const reader = s.as('reader', (client.body as { chef_key: { private_key: string } }).chef_key.private_key);
    const seen = (await reader.request('GET', `${ORG}/search/node?q=*:*`)).body as Page;
    t.same([seen.total, names(seen)], [1, ['web1']]);

    t.equal((await s.admin.request('POST', `${ORG}/data`, { name: 'apps' })).status, 201);
    t.equal((await s.admin.request('POST', `${ORG}/data/apps`, { id: 'shop', port: 8080 })).status, 201);
    t.same((await s.admin.request('GET', `${ORG}/search/apps?q=port:8080`)).body, {
      total: 1,
      start: 0,
      rows: [{ id: 'shop', port: 8080 }],
    });
    t.equal((await s.admin.request('GET', `${ORG}/search/nothing?q=*:*`)).status, 404);

    s = await s.restart();
    t.same(
      names((await s.admin.request('GET', `${ORG}/search/node?q=role:db`)).body),
      ['web2'],
      'the index is rebuilt after a restart',
    );
  });
}
