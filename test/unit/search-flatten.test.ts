// Flattening of nodes, roles, environments and data bag items into the fields users search.
import t from 'tap';
import { expandRunList, flattenDocument } from '../../src/search/flatten.js';

const sorted = (values: string[] | undefined): string[] => [...(values ?? [])].sort();

t.test('node attributes merge with automatic > override > normal > default', async (t) => {
  const fields = flattenDocument('node', {
    name: 'web01',
    default: { app: { port: 80, user: 'www', only_default: 'd' } },
    normal: { app: { port: 81, user: 'app' } },
    override: { app: { port: 82 } },
    automatic: { app: { port: 83 } },
  });
  t.same(fields.get('app_port'), ['83'], 'automatic wins');
  t.same(fields.get('app_user'), ['app'], 'normal beats default when nothing higher sets it');
  t.same(fields.get('app_only_default'), ['d'], 'deep merge keeps keys only a lower level has');
  t.same(sorted(fields.get('port')), ['83'], 'the leaf name carries only the merged value');
  t.notOk(fields.has('default_app_port'), 'precedence levels are not fields of their own');
  t.notOk(fields.has('automatic'), 'precedence levels are not fields of their own');
});

t.test('override beats normal, and a scalar replaces an object from a lower level', async (t) => {
  const fields = flattenDocument('node', {
    normal: { version: '1.0', db: { host: 'a' } },
    override: { version: '2.0', db: 'external' },
  });
  t.same(fields.get('version'), ['2.0']);
  t.same(fields.get('db'), ['external']);
  t.notOk(fields.has('db_host'), 'the replaced object leaves no fields');
});

t.test('full underscore-joined paths and leaf names are both fields', async (t) => {
  const fields = flattenDocument('node', {
    normal: { push_jobs: { whitelist: { 'chef-client': 'chef-client', uptime: 'uptime' } } },
    automatic: { languages: { ruby: { version: '3.1.4' }, python: { version: '3.10.12' } } },
  });
  t.same(fields.get('push_jobs_whitelist_chef-client'), ['chef-client']);
  t.same(fields.get('chef-client'), ['chef-client']);
  t.same(fields.get('languages_ruby_version'), ['3.1.4']);
  t.same(sorted(fields.get('version')), ['3.1.4', '3.10.12'], 'leaf names gather values from every path');
  t.same(sorted(fields.get('languages')), ['python', 'ruby'], 'keys are values of their parent path');
  t.same(sorted(fields.get('push_jobs_whitelist')), ['chef-client', 'uptime']);
  t.same(sorted(fields.get('whitelist')), ['chef-client', 'uptime']);
});

t.test('arrays contribute each element, and arrays from different levels are united', async (t) => {
  const fields = flattenDocument('node', {
    default: { ntp: { servers: ['0.pool', '1.pool'] } },
    normal: { tags: ['canary', 'web'], ntp: { servers: ['2.pool'] } },
    automatic: { filesystem: { disks: [{ mount: '/' }, { mount: '/data' }] } },
  });
  t.same(sorted(fields.get('tags')), ['canary', 'web']);
  t.same(sorted(fields.get('ntp_servers')), ['0.pool', '1.pool', '2.pool']);
  t.same(sorted(fields.get('filesystem_disks_mount')), ['/', '/data'], 'objects in arrays continue the path');
  t.same(sorted(fields.get('mount')), ['/', '/data']);
});

t.test('numbers, booleans and null become strings; values keep their case', async (t) => {
  const fields = flattenDocument('node', {
    automatic: { cpu: { total: 4, mhz: 2.5 }, virtual: true, bare: false, missing: null, platform: 'Ubuntu' },
  });
  t.same(fields.get('cpu_total'), ['4']);
  t.same(fields.get('mhz'), ['2.5']);
  t.same(fields.get('virtual'), ['true']);
  t.same(fields.get('bare'), ['false']);
  t.same(fields.get('missing'), ['']);
  t.same(fields.get('platform'), ['Ubuntu']);
});

t.test('node top-level fields: name, chef_environment, chef_type, run_list entries', async (t) => {
  const fields = flattenDocument('node', {
    name: 'web01',
    chef_environment: 'prod',
    run_list: ['recipe[nginx]', 'role[web]'],
    normal: { name: 'shadowed', chef_environment: 'shadowed' },
  });
  t.same(fields.get('name'), ['web01'], 'the node name wins over an attribute called name');
  t.same(fields.get('chef_environment'), ['prod']);
  t.same(fields.get('chef_type'), ['node']);
  t.same(fields.get('run_list'), ['recipe[nginx]', 'role[web]']);
});

t.test('run-list expansion gives role and recipe fields', async (t) => {
  const fields = flattenDocument('node', {
    name: 'web01',
    run_list: [
      'role[web]',
      'role[base]',
      'recipe[nginx]',
      'recipe[postgresql::server]',
      'recipe[ntp::default]',
      'recipe[app@1.2.0]',
      'users',
    ],
  });
  t.same(sorted(fields.get('role')), ['base', 'web']);
  t.same(sorted(fields.get('recipe')), [
    'app',
    'app::default',
    'nginx',
    'nginx::default',
    'ntp',
    'ntp::default',
    'postgresql::server',
    'users',
    'users::default',
  ]);
});

t.test('expandRunList: the default recipe answers to both names; non-strings are skipped', async (t) => {
  t.same(expandRunList(['recipe[nginx::default]']), { recipe: ['nginx::default', 'nginx'], role: [] });
  t.same(expandRunList(['recipe[nginx]']), { recipe: ['nginx', 'nginx::default'], role: [] });
  t.same(expandRunList([42, null, 'role[db]']), { recipe: [], role: ['db'] });
});

t.test('a node without attributes or run list still has its name and environment', async (t) => {
  const fields = flattenDocument('node', { name: 'bare', chef_environment: '_default' });
  t.same(fields.get('name'), ['bare']);
  t.same(fields.get('chef_environment'), ['_default']);
  t.notOk(fields.has('role'));
  t.notOk(fields.has('recipe'));
});

t.test('roles, environments and data bag items flatten their JSON as it is', async (t) => {
  const role = flattenDocument('role', {
    name: 'web',
    description: 'Web servers',
    run_list: ['recipe[nginx]'],
    default_attributes: { nginx: { port: 8080 } },
    override_attributes: { nginx: { port: 9090 } },
  });
  t.same(role.get('name'), ['web']);
  t.same(role.get('run_list'), ['recipe[nginx]']);
  t.same(role.get('default_attributes_nginx_port'), ['8080'], 'role attribute levels are not merged');
  t.same(role.get('override_attributes_nginx_port'), ['9090']);
  t.same(sorted(role.get('port')), ['8080', '9090']);
  t.notOk(role.has('recipe'), 'run lists are only expanded for nodes');

  const env = flattenDocument('environment', { name: 'prod', cookbook_versions: { nginx: '= 1.2.0' } });
  t.same(env.get('name'), ['prod']);
  t.same(env.get('cookbook_versions_nginx'), ['= 1.2.0']);

  const item = flattenDocument('data', { id: 'alice', groups: ['ops'], ssh: { keys: ['ssh-rsa AAA'] } });
  t.same(item.get('id'), ['alice']);
  t.same(item.get('groups'), ['ops']);
  t.same(item.get('ssh_keys'), ['ssh-rsa AAA']);
});

t.test('a document that is not an object has no fields', async (t) => {
  t.equal(flattenDocument('data', 'text').size, 0);
  t.equal(flattenDocument('node', null).size, 0);
  t.equal(flattenDocument('role', [1, 2]).size, 0);
});
