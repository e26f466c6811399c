// FileStore against the shared contract, plus what only a file layout can show.
import { mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { FileStore } from '../../src/store/file-store.js';
import { openStore } from '../../src/store/open-store.js';
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
  await store.putMany('orgs', [[org255, { n: 2 }], ['short', { n: 3 }]]);
  t.same(await store.get('orgs', long), { n: 1 });
  t.same(await store.get('orgs', org255), { n: 2 });
  t.same(Object.fromEntries(await new FileStore(dir).load('orgs')), { [long]: { n: 1 }, [org255]: { n: 2 }, short: { n: 3 } });
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
  const store = await openStore({ data_dir: dir });
  t.teardown(() => store.close());
  t.equal(store.kind, 'file');
  await store.put('orgs', 'acme', { a: 1 });
  t.same(await readdir(join(dir, 'store', 'orgs')), ['acme.json']);
  await writeFile(join(dir, 'taken'), '');
  await t.rejects(openStore({ data_dir: join(dir, 'taken') }), { message: /cannot be created or written/ });
});
