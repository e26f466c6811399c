// The Store contract, written once and run against every implementation.
import type { Test } from 'tap';
import type { Store } from '../../src/store/store.js';

export interface StoreFixture {
  store: Store;
  /** Opens a second store over the same data, as a restarted server would. */
  reopen: () => Promise<Store>;
  /** Closes what the fixture opened and deletes its data. */
  cleanup: () => Promise<void>;
}

const nested = {
  name: 'web01',
  automatic: { platform: 'debian', cpu: { total: 8, flags: ['sse4', 'avx2'] } },
  run_list: ['recipe[base]', 'role[web]'],
  tags: [],
  attrs: { empty: {}, nothing: null, yes: true, no: false, ratio: 0.25, big: 2 ** 53 - 1, neg: -3 },
  note: 'ünïcödé ✓ 日本語 "quotes" \\ back\nslash',
};

export function storeSuite(t: Test, makeStore: () => Promise<StoreFixture>): void {
  /** A fresh store for one subtest, cleaned up when that subtest ends. */
  async function fresh(tt: Test): Promise<StoreFixture> {
    const fixture = await makeStore();
    tt.teardown(fixture.cleanup);
    return fixture;
  }

  t.test('nested JSON comes back unchanged from get and load', async (tt) => {
    const { store } = await fresh(tt);
    await store.put('org/acme/nodes', 'web01', nested);
    await store.put('org/acme/nodes', 'null-doc', null);
    await store.put('org/acme/nodes', 'text', 'just a string');
    tt.same(await store.get('org/acme/nodes', 'web01'), nested);
    tt.equal(await store.get('org/acme/nodes', 'null-doc'), null);
    const all = await store.load('org/acme/nodes');
    tt.same([...all.keys()].sort(), ['null-doc', 'text', 'web01']);
    tt.same(all.get('web01'), nested);
    tt.equal(all.get('text'), 'just a string');
  });

  t.test('a missing collection loads as empty and a missing document is undefined', async (tt) => {
    const { store } = await fresh(tt);
    tt.equal((await store.load('org/nobody/clients')).size, 0);
    tt.equal(await store.get('org/nobody/clients', 'x'), undefined);
    await store.put('org/acme/clients', 'a', { n: 1 });
    tt.equal(await store.get('org/acme/clients', 'b'), undefined);
  });

  t.test('put replaces the whole document instead of merging', async (tt) => {
    const { store } = await fresh(tt);
    await store.put('orgs', 'acme', { full_name: 'Acme', guid: 'g1' });
    await store.put('orgs', 'acme', { full_name: 'Acme Corp' });
    tt.same(await store.get('orgs', 'acme'), { full_name: 'Acme Corp' });
    tt.equal((await store.load('orgs')).size, 1);
  });

  t.test('remove deletes one document and keeps the others', async (tt) => {
    const { store } = await fresh(tt);
    await store.put('users', 'alice', { a: 1 });
    await store.put('users', 'bob', { b: 2 });
    await store.remove('users', 'alice');
    tt.equal(await store.get('users', 'alice'), undefined);
    tt.same([...(await store.load('users')).entries()], [['bob', { b: 2 }]]);
  });

  t.test('removing a missing document or collection is not an error', async (tt) => {
    const { store } = await fresh(tt);
    await store.put('users', 'bob', { b: 2 });
    await tt.resolves(store.remove('users', 'nobody'));
    await tt.resolves(store.remove('no/such/collection', 'x'));
    await tt.resolves(store.drop('no/such'));
    tt.same(await store.get('users', 'bob'), { b: 2 });
  });

  t.test('drop removes a collection and its sub-collections but not siblings', async (tt) => {
    const { store } = await fresh(tt);
    await store.put('org', 'a', { org: 'a' });
    await store.put('org', 'ab', { org: 'ab' });
    await store.put('org/a', 'meta', { m: 1 });
    await store.put('org/a/clients', 'c1', { c: 1 });
    await store.put('org/a/nodes/states', 'n1', { s: 1 });
    await store.put('org/ab', 'meta', { m: 2 });
    await store.put('org/ab/clients', 'c2', { c: 2 });
    await store.drop('org/a');
    for (const gone of ['org/a', 'org/a/clients', 'org/a/nodes/states']) {
      tt.equal((await store.load(gone)).size, 0, `${gone} is empty`);
    }
    tt.same(await store.get('org/ab', 'meta'), { m: 2 });
    tt.same(await store.get('org/ab/clients', 'c2'), { c: 2 });
    tt.same([...(await store.load('org')).keys()].sort(), ['a', 'ab'], 'the parent keeps its own documents');
    await store.put('org/a/clients', 'c3', { c: 3 });
    tt.same([...(await store.load('org/a/clients')).keys()], ['c3'], 'a dropped collection can be written again');
  });

  t.test('ids with slashes, colons, spaces, dots, percent signs and unicode round trip', async (tt) => {
    const { store } = await fresh(tt);
    const ids = [
      'a/b/c',
      'host:8080',
      'with space',
      'ünï 日本',
      '..',
      '.',
      '100%',
      'a%2Fb',
      'clients',
      'x.json',
      '~t.tmp',
    ];
    for (const [i, id] of ids.entries()) await store.put('org/acme/nodes', id, { i });
    const all = await store.load('org/acme/nodes');
    tt.same([...all.keys()].sort(), [...ids].sort());
    for (const [i, id] of ids.entries()) {
      tt.same(await store.get('org/acme/nodes', id), { i }, `get ${JSON.stringify(id)}`);
    }
    tt.equal((await store.load('org/acme/nodes/a')).size, 0, 'a slash in an id does not make a collection');
    await store.remove('org/acme/nodes', 'a/b/c');
    tt.equal(await store.get('org/acme/nodes', 'a/b/c'), undefined);
    tt.equal((await store.load('org/acme/nodes')).size, ids.length - 1);
  });

  t.test('invalid collection names and non-JSON documents are refused', async (tt) => {
    const { store } = await fresh(tt);
    for (const bad of ['', 'Org', 'org//a', '../up', 'org/..', 'a b', 'org/x.json']) {
      await tt.rejects(store.put(bad, 'id', {}), RangeError, `put into ${JSON.stringify(bad)}`);
      await tt.rejects(store.load(bad), RangeError, `load ${JSON.stringify(bad)}`);
      await tt.rejects(store.drop(bad), RangeError, `drop ${JSON.stringify(bad)}`);
    }
    await tt.rejects(store.put('orgs', 'x', undefined), TypeError);
    await tt.rejects(
      store.putMany('orgs', [
        ['y', { ok: 1 }],
        ['z', undefined],
      ]),
      TypeError,
    );
    tt.equal((await store.load('orgs')).size, 0, 'a refused batch writes nothing');
  });

  t.test('putMany writes every document of a batch and replaces existing ones', async (tt) => {
    const { store } = await fresh(tt);
    await store.put('org/acme/node_states', 'n0', { status: 'old' });
    const batch = Array.from({ length: 1000 }, (_, i) => [`n${i}`, { status: 'online', seq: i }] as const);
    await store.putMany('org/acme/node_states', batch);
    await store.putMany('org/acme/node_states', []);
    const all = await store.load('org/acme/node_states');
    tt.equal(all.size, 1000);
    tt.same(all.get('n0'), { status: 'online', seq: 0 });
    tt.same(all.get('n999'), { status: 'online', seq: 999 });
    await store.putMany('org/acme/node_states', [
      ['n1', { v: 1 }],
      ['n1', { v: 2 }],
    ]);
    tt.same(await store.get('org/acme/node_states', 'n1'), { v: 2 }, 'a repeated id keeps its last document');
  });

  t.test('a reopened store sees what the first one wrote', async (tt) => {
    const { store, reopen } = await fresh(tt);
    await store.put('orgs', 'acme', nested);
    await store.putMany('org/acme/clients', [
      ['c1', { k: 1 }],
      ['c2', { k: 2 }],
    ]);
    await store.put('org/gone/clients', 'c', {});
    await store.drop('org/gone');
    await store.remove('org/acme/clients', 'c2');
    await store.close();
    const again = await reopen();
    tt.teardown(() => again.close());
    tt.same(await again.get('orgs', 'acme'), nested);
    tt.same([...(await again.load('org/acme/clients')).entries()], [['c1', { k: 1 }]]);
    tt.equal((await again.load('org/gone/clients')).size, 0);
    tt.equal(await again.state(), 'ok');
  });

  t.test('200 concurrent puts all land and the last put of one id wins', async (tt) => {
    const { store } = await fresh(tt);
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.put('org/acme/nodes', `n${i}`, { i })));
    const all = await store.load('org/acme/nodes');
    tt.equal(all.size, 200);
    tt.ok(
      [...all].every(([id, doc]) => JSON.stringify(doc) === `{"i":${id.slice(1)}}`),
      'each id holds its own document',
    );

    await Promise.all(Array.from({ length: 200 }, (_, i) => store.put('orgs', 'acme', { version: i })));
    tt.same(await store.get('orgs', 'acme'), { version: 199 });

    const writes = [store.put('orgs', 'temp', { v: 1 }), store.remove('orgs', 'temp')];
    await Promise.all(writes);
    tt.equal(await store.get('orgs', 'temp'), undefined, 'a remove issued after a put wins');
  });

  t.test('state is ok while the store is usable', async (tt) => {
    const { store } = await fresh(tt);
    tt.equal(await store.state(), 'ok');
  });

  t.test('a field map keeps the last value of each field and costs only what each call sets', async (tt) => {
    const { store } = await fresh(tt);
    const jobs = 'org/acme/jobs';
    tt.same(await store.getFields(jobs, 'j1'), new Map(), 'a missing field map is empty');
    await store.putFields(jobs, 'j1', [
      ['web1', { s: 'new' }],
      ['web2', { s: 'new' }],
      ['ü 日本/x', nested],
    ]);
    await store.putFields(jobs, 'j1', [
      ['web1', { s: 'ready' }],
      ['web1', { s: 'running' }],
    ]);
    await store.putFields(jobs, 'j1', []);
    await store.putFields(jobs, 'j2', [['web1', 'other job']]);
    const fields = await store.getFields(jobs, 'j1');
    tt.same([...fields.keys()].sort(), ['web1', 'web2', 'ü 日本/x'].sort());
    tt.same(fields.get('web1'), { s: 'running' }, 'the last value set wins, within a call and across calls');
    tt.same(fields.get('ü 日本/x'), nested, 'values are JSON and come back unchanged');
    tt.same([...(await store.getFields(jobs, 'j2')).entries()], [['web1', 'other job']], 'maps are apart');
    tt.equal((await store.load(jobs)).size, 0, 'field maps are not documents of the collection');
    await store.put(jobs, 'j1', { header: true });
    tt.same(await store.get(jobs, 'j1'), { header: true }, 'a document and a field map may share an id');
    tt.equal((await store.getFields(jobs, 'j1')).size, 3);
  });

  t.test('field maps are removed one by one or with their collection, and survive a reopen', async (tt) => {
    const { store, reopen } = await fresh(tt);
    await store.putFields('org/a/jobs', 'j1', [['n1', 1]]);
    await store.putFields('org/a/jobs', 'j2', [['n1', 2]]);
    await store.putFields('org/ab/jobs', 'j1', [['n1', 3]]);
    await store.removeFields('org/a/jobs', 'j1');
    await tt.resolves(store.removeFields('org/a/jobs', 'never'), 'removing a missing map is not an error');
    tt.equal((await store.getFields('org/a/jobs', 'j1')).size, 0);
    await store.close();
    const again = await reopen();
    tt.teardown(() => again.close());
    tt.same([...(await again.getFields('org/a/jobs', 'j2')).entries()], [['n1', 2]]);
    await again.drop('org/a');
    tt.equal((await again.getFields('org/a/jobs', 'j2')).size, 0, 'dropped with its collection');
    tt.same([...(await again.getFields('org/ab/jobs', 'j1')).entries()], [['n1', 3]], 'a sibling keeps its maps');
    await again.putFields('org/a/jobs', 'j2', [['n9', 9]]);
    tt.same([...(await again.getFields('org/a/jobs', 'j2')).entries()], [['n9', 9]], 'and can be written again');
  });

  t.test('a field map refuses values JSON cannot hold, and writes nothing of that call', async (tt) => {
    const { store } = await fresh(tt);
    await store.putFields('org/acme/jobs', 'j1', [['a', 1]]);
    await tt.rejects(
      store.putFields('org/acme/jobs', 'j1', [
        ['b', 2],
        ['c', undefined],
      ]),
      TypeError,
    );
    tt.same([...(await store.getFields('org/acme/jobs', 'j1')).entries()], [['a', 1]]);
  });

  t.test('apply writes and removes documents of several collections as one', async (tt) => {
    const { store, reopen } = await fresh(tt);
    await store.put('org/acme/clients', 'old', { k: 0 });
    await store.apply([
      { collection: 'orgs', id: 'acme', doc: nested },
      { collection: 'org/acme/clients', id: 'c1', doc: { k: 1 } },
      { collection: 'org/acme/clients', id: 'old', remove: true },
      { collection: 'org/acme/groups', id: 'admins', doc: null },
      { collection: 'org/acme/clients', id: 'c1', doc: { k: 2 } },
    ]);
    await store.apply([]);
    tt.same(await store.get('orgs', 'acme'), nested);
    tt.same([...(await store.load('org/acme/clients')).entries()], [['c1', { k: 2 }]], 'the last op on an id wins');
    tt.equal(await store.get('org/acme/groups', 'admins'), null, 'a null document is a document, not a removal');
    await store.close();
    const again = await reopen();
    tt.teardown(() => again.close());
    tt.same(await again.get('org/acme/clients', 'c1'), { k: 2 });
  });

  t.test('apply sets and removes field map fields and removes field maps together with documents', async (tt) => {
    const { store, reopen } = await fresh(tt);
    await store.putFields('org/acme/groups', 'clients', [
      ['c:a', 0],
      ['c:b', 1],
    ]);
    await store.putFields('org/acme/groups', 'gone', [['c:a', 0]]);
    await store.apply([
      { collection: 'org/acme/clients', id: 'c', doc: { name: 'c' } },
      { collection: 'org/acme/groups', id: 'clients', fields: [['c:c', 2]] },
      { collection: 'org/acme/groups', id: 'clients', fields: [['c:a', null]] },
      { collection: 'org/acme/groups', id: 'gone', removeFields: true },
      { collection: 'org/acme/groups', id: 'new', fields: [] },
    ]);
    const expected = [
      ['c:b', 1],
      ['c:c', 2],
    ];
    const sorted = (m: Map<string, unknown>) => [...m.entries()].sort(([a], [b]) => a.localeCompare(b));
    tt.same(sorted(await store.getFields('org/acme/groups', 'clients')), expected, 'c:a removed, c:c set');
    tt.equal((await store.getFields('org/acme/groups', 'gone')).size, 0, 'the removed map is gone');
    tt.same(await store.get('org/acme/clients', 'c'), { name: 'c' }, 'with the document of the same apply');
    await store.close();
    const again = await reopen();
    tt.teardown(() => again.close());
    tt.same(sorted(await again.getFields('org/acme/groups', 'clients')), expected, 'a reopened store agrees');
    await again.drop('org/acme');
    tt.equal((await again.getFields('org/acme/groups', 'clients')).size, 0, 'dropped with its organization');
  });

  t.test('a field set to null is removed, and set again later it is back', async (tt) => {
    const { store } = await fresh(tt);
    await store.putFields('org/acme/jobs', 'j1', [
      ['a', 1],
      ['b', 2],
    ]);
    await store.putFields('org/acme/jobs', 'j1', [['a', null]]);
    tt.same([...(await store.getFields('org/acme/jobs', 'j1')).entries()], [['b', 2]]);
    await store.putFields('org/acme/jobs', 'j1', [
      ['a', null],
      ['a', 3],
    ]);
    tt.same((await store.getFields('org/acme/jobs', 'j1')).get('a'), 3, 'removed then set in one call ends set');
  });

  t.test('apply refusing one op writes none of them', async (tt) => {
    const { store } = await fresh(tt);
    await tt.rejects(
      store.apply([
        { collection: 'orgs', id: 'a', doc: { ok: 1 } },
        { collection: 'orgs', id: 'b', doc: undefined },
      ]),
      TypeError,
    );
    await tt.rejects(
      store.apply([
        { collection: 'orgs', id: 'a', doc: { ok: 1 } },
        { collection: 'Bad Name', id: 'b', doc: {} },
      ]),
      RangeError,
    );
    tt.equal((await store.load('orgs')).size, 0);
  });
}
