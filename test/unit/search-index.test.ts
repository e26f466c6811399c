// Search index: which documents users' queries find, in what order and pages, and that saves and deletes show at once.
import t from 'tap';
import { flattenDocument } from '../../src/search/flatten.js';
import { SearchIndex } from '../../src/search/search-index.js';
import { parseQuery } from '../../src/search/query.js';

function fields(record: Record<string, string | string[]>): Map<string, string[]> {
  return new Map(Object.entries(record).map(([k, v]) => [k, Array.isArray(v) ? v : [v]]));
}

function indexOf(docs: Record<string, Record<string, string | string[]>>): SearchIndex {
  const index = new SearchIndex();
  for (const [id, record] of Object.entries(docs)) index.put(id, fields(record));
  return index;
}

function find(index: SearchIndex, q: string): string[] {
  return index.search(parseQuery(q), { start: 0, rows: 1000 }).ids;
}

const fleet = () =>
  indexOf({
    web1: { name: 'web1', role: ['web', 'base'], chef_environment: 'prod', platform: 'Ubuntu', uptime_seconds: '9' },
    web2: {
      name: 'web2',
      role: ['web', 'base'],
      chef_environment: 'staging',
      platform: 'ubuntu',
      uptime_seconds: '10',
    },
    db1: { name: 'db1', role: ['db', 'base'], chef_environment: 'prod', platform: 'centos', uptime_seconds: '100' },
    cache1: {
      name: 'cache-1',
      role: 'cache',
      chef_environment: 'prod',
      platform: 'centos',
      tags: 'canary',
      uptime_seconds: 'n/a',
    },
  });

t.test('an exact term finds the documents holding that value', async (t) => {
  const index = fleet();
  t.same(find(index, 'role:web'), ['web1', 'web2']);
  t.same(find(index, 'chef_environment:prod'), ['cache1', 'db1', 'web1'], 'results come in id order');
  t.same(find(index, 'role:nothing'), []);
  t.same(find(index, 'nofield:web'), []);
});

t.test('values match case-insensitively, field names case-sensitively', async (t) => {
  const index = fleet();
  t.same(find(index, 'platform:UBUNTU'), ['web1', 'web2']);
  t.same(find(index, 'platform:ubu*'), ['web1', 'web2']);
  t.same(find(index, 'Platform:ubuntu'), []);
});

t.test('AND binds tighter than OR', async (t) => {
  const index = fleet();
  // Lucene's own parser would read this as +role:web +chef_environment:prod and find only web1.
  t.same(find(index, 'role:db OR role:web AND chef_environment:prod'), ['db1', 'web1']);
  t.same(find(index, '(role:db OR role:web) AND chef_environment:prod'), ['db1', 'web1']);
  t.same(find(index, 'role:web AND chef_environment:prod OR role:cache'), ['cache1', 'web1']);
  t.same(find(index, 'role:web chef_environment:staging'), ['web1', 'web2'], 'adjacent clauses are ORed');
});

t.test('NOT, - and + in lists of clauses', async (t) => {
  const index = fleet();
  t.same(find(index, 'NOT role:web'), ['cache1', 'db1'], 'a lone NOT finds everything else');
  t.same(find(index, '-role:web'), ['cache1', 'db1']);
  t.same(
    find(index, 'NOT role:web AND chef_environment:prod'),
    ['cache1', 'db1'],
    'NOT applies to the next clause only',
  );
  t.same(find(index, 'NOT (role:web OR role:db)'), ['cache1']);
  t.same(find(index, 'role:base -chef_environment:staging'), ['db1', 'web1']);
  t.same(find(index, 'role:base NOT chef_environment:staging'), ['db1', 'web1']);
  t.same(
    find(index, 'role:base OR NOT chef_environment:staging'),
    ['db1', 'web1'],
    'NOT in a list prohibits, as in Lucene',
  );
  t.same(find(index, '+role:base chef_environment:staging'), ['db1', 'web1', 'web2'], 'optional clauses do not narrow');
  t.same(find(index, '+role:base +chef_environment:staging'), ['web2']);
  t.same(find(index, 'role:base AND !chef_environment:prod'), ['web2']);
  t.same(find(index, 'NOT NOT role:db'), ['db1']);
});

t.test('wildcards: trailing, leading, inner, and ? for one character', async (t) => {
  const index = fleet();
  t.same(find(index, 'name:web*'), ['web1', 'web2']);
  t.same(find(index, 'name:*1'), ['cache1', 'db1', 'web1']);
  t.same(find(index, 'name:w*1'), ['web1']);
  t.same(find(index, 'name:web?'), ['web1', 'web2']);
  t.same(find(index, 'name:we?'), [], '? stands for exactly one character');
  t.same(find(index, 'name:cache?1'), ['cache1'], 'regular-expression characters in values are literal');
  t.same(find(index, 'tags:*'), ['cache1'], 'field:* finds documents that have the field');
  t.same(find(index, '*:*'), ['cache1', 'db1', 'web1', 'web2']);
});

t.test('escaped special characters match literally', async (t) => {
  const index = indexOf({
    a: { name: 'web-1', run_list: ['recipe[nginx]', 'role[web]'], path: '/var/log', glob: 'a*b' },
    b: { name: 'web1', run_list: 'recipe[nginx::default]', glob: 'axxb' },
  });
  t.same(find(index, 'name:web\\-1'), ['a']);
  t.same(find(index, 'run_list:recipe\\[nginx\\]'), ['a']);
  t.same(find(index, 'run_list:recipe\\[nginx\\:\\:default\\]'), ['b']);
  t.same(find(index, 'path:\\/var\\/log'), ['a']);
  t.same(find(index, 'glob:a\\*b'), ['a'], 'an escaped * is not a wildcard');
  t.same(find(index, 'glob:a*b'), ['a', 'b']);
  t.same(find(index, 'run_list:recipe\\[*'), ['a', 'b'], 'escapes and wildcards combine');
});

t.test('a quoted phrase matches a whole value with spaces', async (t) => {
  const index = indexOf({
    a: { description: 'Web servers for the shop' },
    b: { description: 'web' },
  });
  t.same(find(index, 'description:"web servers for the shop"'), ['a']);
  t.same(find(index, 'description:"web servers"'), [], 'a phrase is a whole value, not a part of one');
  t.same(find(index, 'description:web'), ['b']);
  t.same(find(index, 'description:web*'), ['a', 'b']);
});

t.test('ranges: inclusive, exclusive, open, numeric and string comparison', async (t) => {
  const index = fleet();
  t.same(find(index, 'uptime_seconds:[9 TO 10]'), ['web1', 'web2'], 'numbers compare as numbers');
  t.same(find(index, 'uptime_seconds:{9 TO 100}'), ['web2'], 'exclusive ends');
  t.same(find(index, 'uptime_seconds:[9 TO 100}'), ['web1', 'web2']);
  t.same(
    find(index, 'uptime_seconds:[10 TO *]'),
    ['cache1', 'db1', 'web2'],
    "open upper end; 'n/a' compares as a string",
  );
  t.same(find(index, 'uptime_seconds:[10 TO 1000]'), ['db1', 'web2'], "'n/a' is above '1000' as a string");
  t.same(find(index, 'uptime_seconds:[* TO 9]'), ['web1'], 'open lower end');
  t.same(find(index, 'uptime_seconds:[* TO *]'), ['cache1', 'db1', 'web1', 'web2']);
  t.same(find(index, 'uptime_seconds:[a TO z]'), ['cache1'], 'string ends compare as strings');
  t.same(find(index, 'name:[db1 TO web1]'), ['db1', 'web1'], 'string range, inclusive');
  t.same(find(index, 'name:{db1 TO web1}'), [], 'string range, exclusive');
  t.same(find(index, 'name:[C TO E]'), ['cache1', 'db1'], 'string ranges fold case');
  const strings = indexOf({ x: { v: '9' }, y: { v: '10' }, z: { v: '9a' } });
  t.same(find(strings, 'v:[1 TO 9]'), ['x'], "numeric: 10 is above 9; '9a' is a string above '9'");
  t.same(find(strings, 'v:[8 TO 9b]'), ['x', 'z'], "string: '10' sorts before '8'");
});

t.test('a value without a field searches every field', async (t) => {
  const index = fleet();
  t.same(find(index, 'canary'), ['cache1']);
  t.same(find(index, 'centos'), ['cache1', 'db1']);
  t.same(find(index, 'web*'), ['web1', 'web2']);
  t.same(find(index, '*:prod'), ['cache1', 'db1', 'web1']);
});

t.test('paging: start and rows, stable id order, and past the end', async (t) => {
  const index = new SearchIndex();
  for (const n of [5, 3, 9, 1, 7, 2, 8, 4, 6, 0]) index.put(`node-${n}`, fields({ kind: 'n' }));
  const all = parseQuery('kind:n');
  t.same(index.search(all, { start: 0, rows: 3 }), { total: 10, ids: ['node-0', 'node-1', 'node-2'] });
  t.same(index.search(all, { start: 3, rows: 3 }), { total: 10, ids: ['node-3', 'node-4', 'node-5'] });
  t.same(index.search(all, { start: 8, rows: 5 }), { total: 10, ids: ['node-8', 'node-9'] }, 'a short last page');
  t.same(index.search(all, { start: 10, rows: 5 }), { total: 10, ids: [] }, 'start at the end');
  t.same(index.search(all, { start: 50, rows: 5 }), { total: 10, ids: [] }, 'start beyond the end');
  t.same(index.search(all, { start: 0, rows: 0 }), { total: 10, ids: [] }, 'rows 0 counts only');
  t.throws(() => index.search(all, { start: -1, rows: 5 }), RangeError);
  t.throws(() => index.search(all, { start: 0, rows: 1.5 }), RangeError);
});

t.test('the filter hides documents from the page and from the total', async (t) => {
  const index = fleet();
  const seen: string[] = [];
  const result = index.search(parseQuery('role:base'), {
    start: 0,
    rows: 1,
    filter: (id) => {
      seen.push(id);
      return id !== 'db1';
    },
  });
  t.same(result, { total: 2, ids: ['web1'] }, 'db1 is neither returned nor counted, and paging skips it');
  t.same(seen.sort(), ['db1', 'web1', 'web2'], 'the filter is asked only about matches');
});

t.test('an update replaces old values: they no longer match, the new ones do', async (t) => {
  const index = fleet();
  t.same(find(index, 'role:web'), ['web1', 'web2']);
  index.put('web1', fields({ name: 'web1', role: ['db'], chef_environment: 'prod' }));
  t.same(find(index, 'role:web'), ['web2'], 'the old role is gone');
  t.same(find(index, 'role:db'), ['db1', 'web1'], 'the new role is found');
  t.same(find(index, 'platform:ubuntu'), ['web2'], 'a field the update dropped is gone');
  t.same(find(index, 'uptime_seconds:[* TO *]'), ['cache1', 'db1', 'web2'], 'ranges see the update too');
  t.same(find(index, 'chef_environment:prod'), ['cache1', 'db1', 'web1'], 'unchanged values still match');
  t.equal(index.size, 4);
});

t.test('remove forgets a document; a removed id can come back', async (t) => {
  const index = fleet();
  t.same(find(index, 'role:web'), ['web1', 'web2']);
  t.equal(index.remove('web1'), true);
  t.equal(index.remove('web1'), false, 'removing twice is a no-op');
  t.same(find(index, 'role:web'), ['web2']);
  t.same(find(index, '*:*'), ['cache1', 'db1', 'web2']);
  t.same(find(index, 'NOT role:db'), ['cache1', 'web2'], 'a removed document is not part of "everything else"');
  t.same(find(index, 'platform:ubu*'), ['web2']);
  index.put('aaa', fields({ role: 'web' }));
  index.put('web1', fields({ role: 'web' }));
  t.same(find(index, 'role:web'), ['aaa', 'web1', 'web2'], 'new ids slot into id order');
  t.equal(index.size, 5);
});

t.test('values shared by many documents stay correct through updates and removals', async (t) => {
  const index = new SearchIndex();
  const id = (n: number) => `n${String(n).padStart(4, '0')}`;
  for (let n = 0; n < 3000; n++) index.put(id(n), fields({ os: 'linux', zone: n % 2 === 0 ? 'even' : 'odd' }));
  t.equal(index.search(parseQuery('os:linux'), { start: 0, rows: 0 }).total, 3000);
  for (let n = 0; n < 3000; n += 3) index.put(id(n), fields({ os: 'windows', zone: 'none' }));
  for (let n = 1; n < 3000; n += 3) index.remove(id(n));
  t.equal(index.search(parseQuery('os:linux'), { start: 0, rows: 0 }).total, 1000);
  t.equal(index.search(parseQuery('os:windows'), { start: 0, rows: 0 }).total, 1000);
  t.same(index.search(parseQuery('os:linux AND zone:even'), { start: 0, rows: 3 }).ids, ['n0002', 'n0008', 'n0014']);
  for (let n = 0; n < 3000; n++) index.remove(id(n));
  t.equal(index.size, 0);
  t.same(find(index, '*:*'), []);
  t.same(find(index, 'os:*'), [], 'a field no document has any more is gone');
});

t.test('flattened nodes are searchable by role, recipe, environment and attribute', async (t) => {
  const index = new SearchIndex();
  const node = (name: string, env: string, runList: string[], automatic: object) =>
    index.put(name, flattenDocument('node', { name, chef_environment: env, run_list: runList, automatic }));
  node('web01', 'prod', ['role[web]', 'recipe[nginx]'], {
    platform: 'ubuntu',
    languages: { ruby: { version: '3.1.4' } },
  });
  node('db01', 'prod', ['role[db]', 'recipe[postgresql::server]'], {
    platform: 'centos',
    languages: { python: { version: '3.10' } },
  });
  t.same(find(index, 'role:web AND chef_environment:prod'), ['web01']);
  t.same(find(index, 'recipe:nginx\\:\\:default'), ['web01']);
  t.same(find(index, 'recipe:postgresql*'), ['db01']);
  t.same(find(index, 'languages_ruby_version:3.1.4'), ['web01']);
  t.same(find(index, 'languages:ruby'), ['web01']);
  t.same(find(index, 'version:3*'), ['db01', 'web01']);
  t.same(find(index, 'run_list:role\\[db\\]'), ['db01']);
});

t.test('values that change on every save, or flip back and forth, never match stale documents', async (t) => {
  const index = new SearchIndex();
  for (let n = 0; n < 40; n++) index.put(`n${n}`, fields({ uptime: `u${n}`, state: 'a' }));
  for (let round = 1; round <= 5; round++) {
    for (let n = 0; n < 40; n++)
      index.put(`n${n}`, fields({ uptime: `u${n}-${round}`, state: round % 2 === 0 ? 'a' : 'b' }));
    t.equal(
      index.search(parseQuery('uptime:*'), { start: 0, rows: 0 }).total,
      40,
      `round ${round}: every node has one uptime`,
    );
    t.same(
      find(index, `uptime:u0-${round} OR uptime:u39-${round}`),
      ['n0', 'n39'],
      `round ${round}: current values match`,
    );
  }
  t.same(find(index, 'uptime:u7'), [], 'the first value is gone');
  t.same(find(index, 'uptime:u7-4'), [], 'an intermediate value is gone');
  t.same(find(index, 'uptime:u7-5'), ['n7']);
  t.equal(index.search(parseQuery('uptime:*'), { start: 0, rows: 0 }).total, 40);
  t.equal(index.search(parseQuery('uptime:u1*'), { start: 0, rows: 0 }).total, 11, 'wildcards see only current values');
  t.equal(
    index.search(parseQuery('uptime:[u0 TO u1]'), { start: 0, rows: 0 }).total,
    1,
    'ranges see only current values',
  );
  t.equal(index.search(parseQuery('state:b'), { start: 0, rows: 0 }).total, 40);
  t.same(find(index, 'state:a'), []);
  index.put('n3', fields({ uptime: 'u3-5', state: 'a' }));
  t.same(find(index, 'state:a'), ['n3'], 'a value held before and dropped can be held again');
});
