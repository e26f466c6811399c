// FileStore against the shared contract, plus what only a file layout can show.
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { FileStore } from '../../src/store/file-store.js';
import { openStore } from '../../src/store/open-store.js';
import { until } from '../support/deadline.js';
import { ManualClock } from '../support/manual-clock.js';
import { storeSuite } from './store.suite.js';

async function tempRoot(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'file-store-'));
}

storeSuite(t, async () => {
  const dir = await tempRoot();
  const root = join(dir, 'store');
  const store = new FileStore(root);
  return {
    store,
    reopen: async () => new FileStore(root),
    cleanup: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

t.test('documents are files named after the encoded id, and no temporary file is left', async (t) => {
  const dir = await tempRoot();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = new FileStore(dir);
  await store.put('org/acme/nodes', 'web 01/a', { n: 1 });
  await Promise.all(Array.from({ length: 50 }, (_, i) => store.put('org/acme/nodes', 'busy', { i })));
  await store.put('org/acme', 'meta', { m: 1 });
  t.same((await readdir(join(dir, 'org/acme/nodes'))).sort(), ['busy.json', 'web%2001%2Fa.json']);
  t.same((await readdir(join(dir, 'org/acme'))).sort(), ['meta.json', 'nodes']);
});

t.test('load skips files and folders the store did not write', async (t) => {
  const dir = await tempRoot();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = new FileStore(dir);
  await store.put('orgs', 'acme', { a: 1 });
  await writeFile(join(dir, 'orgs', 'notes.txt'), 'hello');
  await writeFile(join(dir, 'orgs', '~0123.tmp'), '{"half":');
  await writeFile(join(dir, 'orgs', 'bad%zz.json'), '{}');
  await mkdir(join(dir, 'orgs', 'folder.json'));
  t.same([...(await store.load('orgs')).entries()], [['acme', { a: 1 }]]);
});

t.test('an id too long for a file name is kept under its hash and reads back', async (t) => {
  const dir = await tempRoot();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = new FileStore(dir);
  const long = '日'.repeat(100);
  const org255 = `a${'b'.repeat(254)}`;
  await store.put('orgs', long, { n: 1 });
  await store.putMany('orgs', [
    [org255, { n: 2 }],
    ['short', { n: 3 }],
  ]);
  t.same(await store.get('orgs', long), { n: 1 });
  t.same(await store.get('orgs', org255), { n: 2 });
  t.same(Object.fromEntries(await new FileStore(dir).load('orgs')), {
    [long]: { n: 1 },
    [org255]: { n: 2 },
    short: { n: 3 },
  });
  await store.remove('orgs', long);
  t.equal(await store.get('orgs', long), undefined);
});

t.test('state is unavailable when the root cannot be created', async (t) => {
  const dir = await tempRoot();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'plain-file'), '');
  const store = new FileStore(join(dir, 'plain-file', 'store'));
  t.equal(await store.state(), 'unavailable');
  await t.rejects(store.put('orgs', 'acme', {}));
});

t.test('openStore without a Redis URL keeps documents under <data_dir>/store', async (t) => {
  const dir = await tempRoot();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = await openStore({ data_dir: dir, store_timeout: 2 });
  t.teardown(() => store.close());
  t.equal(store.kind, 'file');
  await store.put('orgs', 'acme', { a: 1 });
  t.same(await readdir(join(dir, 'store', 'orgs')), ['acme.json']);
  await writeFile(join(dir, 'taken'), '');
  await t.rejects(openStore({ data_dir: join(dir, 'taken'), store_timeout: 2 }), {
    message: /cannot be created or written/,
  });
});

t.test('a field map line cut short by a crash is skipped, and cut off before the next append', async (t) => {
  const dir = await tempRoot();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = new FileStore(dir);
  await store.putFields('org/acme/jobs', 'j1', [['n1', 'ready']]);
  await store.close();
  const file = join(dir, 'org/acme/jobs/j1.fields');
  await appendFile(file, '[["n1","runn');
  const crashed = new FileStore(dir);
  t.same(
    [...(await crashed.getFields('org/acme/jobs', 'j1')).entries()],
    [['n1', 'ready']],
    'the torn line is skipped',
  );
  await crashed.putFields('org/acme/jobs', 'j1', [['n2', 'new']]);
  t.same(
    [...(await crashed.getFields('org/acme/jobs', 'j1')).entries()],
    [
      ['n1', 'ready'],
      ['n2', 'new'],
    ],
    'the next append starts on a line of its own',
  );
  t.equal((await readFile(file, 'utf8')).split('\n').length, 3, 'two whole lines and the final newline');
});

t.test('a field map written again and again is compacted to what it holds', async (t) => {
  const dir = await tempRoot();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = new FileStore(dir);
  for (let i = 0; i < 2500; i++) await store.putFields('org/acme/node_states', 'all', [[`n${i % 3}`, { i }]]);
  await store.close();
  const lines = (await readFile(join(dir, 'org/acme/node_states/all.fields'), 'utf8')).split('\n').length - 1;
  t.ok(lines <= 1000, `${lines} lines after 2,500 writes`);
  t.same(
    [...(await new FileStore(dir).getFields('org/acme/node_states', 'all')).entries()],
    [
      ['n0', { i: 2499 }],
      ['n1', { i: 2497 }],
      ['n2', { i: 2498 }],
    ],
    'every field keeps its last value',
  );
});

t.test('the write log a crash left is made again, in order, when the store opens', async (t) => {
  const dir = await tempRoot();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const before = new FileStore(dir);
  await before.put('org/acme/clients', 'gone', { k: 0 });
  await before.putFields('org/acme/groups', 'old', [['c:x', 0]]);
  await before.putFields('org/acme/groups', 'clients', [['c:gone', 0]]);
  await before.put('org/acme/cookbooks', 'c', {});
  await before.close();
  t.same(await readdir(join(dir, '~journal')), [], 'a closed store leaves no log');
  const lines = [
    '[{"put":["org/acme/clients","c1"],"doc":{"k":1}},{"remove":["org/acme/clients","gone"]}]',
    '[{"fields":["org/acme/groups","clients"],"line":[["c:c1",1],["c:gone",null]]},{"removeFields":["org/acme/groups","old"]}]',
    '[{"put":["org/acme/clients","c1"],"doc":{"k":2}},{"drop":"org/acme/cookbooks"}]',
    '\0\0\0\0',
    '[{"put":["org/acme/clients","torn"],"doc":{"k"',
  ];
  await writeFile(join(dir, '~journal', '000000000000003.log'), lines.join('\n'));
  const store = new FileStore(dir);
  t.same([...(await store.load('org/acme/clients')).entries()], [['c1', { k: 2 }]], 'made before the first read');
  t.same([...(await store.getFields('org/acme/groups', 'clients')).entries()], [['c:c1', 1]], 'field ops too');
  t.equal((await store.getFields('org/acme/groups', 'old')).size, 0, 'and a field map removed');
  t.equal((await store.load('org/acme/cookbooks')).size, 0, 'and a collection dropped');
  t.same(await readdir(join(dir, '~journal')), [], 'the log is deleted once its changes are synced');
  await store.put('org/acme/clients', 'after', {});
  t.same(await readdir(join(dir, '~journal')), ['000000000000004.log'], 'new changes go to a log numbered after it');
  await store.close();
  t.same([...(await new FileStore(dir).load('org/acme/clients')).keys()].sort(), ['after', 'c1']);
});

t.test('a write log with a bad line before good ones refuses to open, naming the file and line', async (t) => {
  const dir = await tempRoot();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, '~journal'), { recursive: true });
  const log = join(dir, '~journal', '000000000000001.log');
  await writeFile(log, '[{"remove":["orgs","a"]}]\n[{"what":1}]\n[{"remove":["orgs","b"]}]\n');
  const store = new FileStore(dir);
  t.equal(await store.state(), 'unavailable');
  await t.rejects(store.get('orgs', 'a'), { message: `corrupt write log ${log} at line 2` });
});

t.test('changes are synced and the log emptied by a checkpoint soon after they are written', async (t) => {
  const dir = await tempRoot();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = new FileStore(dir);
  t.teardown(() => store.close());
  await Promise.all(Array.from({ length: 200 }, (_, i) => store.put('org/acme/nodes', `n${i}`, { i })));
  const logs = await readdir(join(dir, '~journal'));
  t.equal(logs.length, 1, 'the changes are in one log file');
  const logged = (await readFile(join(dir, '~journal', logs[0] ?? ''), 'utf8')).split('\n').length - 1;
  t.equal(logged, 200, 'a line each');
  await until(
    'a checkpoint to empty the log',
    async () => ((await readdir(join(dir, '~journal'))).length === 0 ? true : undefined),
    10_000,
  );
  t.same(await readdir(join(dir, '~journal')), [], 'the checkpoint deleted the log');
  t.equal((await new FileStore(dir).load('org/acme/nodes')).size, 200);
});

t.test('a checkpoint falls due a second after the first change, however many follow it', async (t) => {
  const dir = await tempRoot();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const clock = new ManualClock();
  const store = new FileStore(dir, clock);
  t.teardown(() => store.close());
  await store.put('orgs', 'a', { n: 1 });
  await clock.advance(600);
  await store.put('orgs', 'b', { n: 2 });
  t.equal(clock.pending, 1, 'one checkpoint is due, for both changes');
  await clock.advance(399);
  t.equal(clock.pending, 1, 'not yet, 999 ms after the first');
  t.equal((await readdir(join(dir, '~journal'))).length, 1, 'the log is kept until then');
  await clock.advance(1);
  t.equal(clock.pending, 0, 'due a second after the first change');
  await until(
    'the checkpoint to empty the log',
    async () => ((await readdir(join(dir, '~journal'))).length === 0 ? true : undefined),
    10_000,
  );
  t.equal(clock.pending, 0, 'and nothing is due once it has synced them');
});
