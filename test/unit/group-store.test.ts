// Group members are stored one field each: whatever sequence of changes a group goes through, with restarts in
// between, reading it back gives the members in the order the API showed them; registering a client in a group
// of thousands writes that one client; and a group stored the old way (members in its document) moves over.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { groupOps, MemberPlaces, withMembers } from '../../actors/org/group-store.js';
import { newOrgWrites } from '../../actors/org/new-org.js';
import { loadOrg, persistWrites } from '../../actors/org/org-store.js';
import type { GroupDoc } from '../../actors/shared/documents.js';
import { generateKeyPair } from '../../src/auth/rsa-keys.js';
import { orgCollection, ORGS } from '../../src/store/collections.js';
import { FileStore } from '../../src/store/file-store.js';
import type { StoreOp } from '../../src/store/store.js';

const COLL = 'orgs/acme/groups';
const emptyAce = { users: [], clients: [], groups: [] };
const acl = { create: emptyAce, read: emptyAce, update: emptyAce, delete: emptyAce, grant: emptyAce };
const group = (clients: string[], users: string[] = [], groups: string[] = []): GroupDoc => ({
  name: 'ops',
  users,
  clients,
  groups,
  acl,
});

/** A store holding one group, as the operations leave it. */
class OneGroup {
  doc: unknown;
  fields = new Map<string, unknown>();
  apply(ops: readonly StoreOp[]): void {
    for (const op of ops) {
      if ('fields' in op) {
        for (const [f, v] of op.fields) {
          if (v === null) this.fields.delete(f);
          else this.fields.set(f, v);
        }
      } else if ('removeFields' in op) this.fields.clear();
      else if ('remove' in op) this.doc = undefined;
      else this.doc = structuredClone(op.doc);
    }
  }
  /** What a restart reads back, and the places it finds in use. */
  load(): { doc: GroupDoc; places: MemberPlaces } {
    const places = new MemberPlaces();
    return { doc: withMembers(this.doc as GroupDoc, this.fields, places), places };
  }
}

const names = fc.uniqueArray(fc.constantFrom(...'abcdefghijklmnop'.split('')), { maxLength: 10 });
const edit = fc.oneof(
  fc.record({ kind: fc.constant('append' as const), names }),
  fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('replace' as const), names }),
  fc.record({ kind: fc.constant('restart' as const) }),
);

t.test('after any changes and restarts, members read back as the API showed them', async (t) => {
  fc.assert(
    fc.property(fc.array(edit, { maxLength: 25 }), (edits) => {
      const store = new OneGroup();
      let places = new MemberPlaces();
      let shown = group([], ['u1'], ['g1']);
      store.apply(groupOps(COLL, 'ops', undefined, shown, places));
      for (const e of edits) {
        let next = shown;
        if (e.kind === 'restart') {
          const loaded = store.load();
          t.same(loaded.doc, shown);
          places = loaded.places;
          continue;
        }
        let appended: string[] | undefined;
        if (e.kind === 'append') {
          // As a registration says it: only clients added at the end (or, half the time, saying nothing).
          const names = e.names.filter((n) => !shown.clients.includes(n));
          next = { ...shown, clients: [...shown.clients, ...names] };
          if (e.names.length % 2 === 0) appended = names;
        }
        if (e.kind === 'remove') next = group(shown.clients.filter((_, i) => i !== e.at % shown.clients.length));
        if (e.kind === 'replace') next = group(e.names, shown.users.length > 0 ? [] : ['u2']);
        store.apply(groupOps(COLL, 'ops', shown, next, places, appended));
        shown = next;
      }
      const { doc } = store.load();
      if (JSON.stringify(doc) !== JSON.stringify(shown)) throw new Error(`read ${JSON.stringify(doc)}`);
      t.same((store.doc as GroupDoc).clients, [], 'the document itself lists nobody');
    }),
  );
});

t.test('a client joining a group of 5,000 writes only its own field; one leaving, only its removal', async (t) => {
  const places = new MemberPlaces();
  const big = group(Array.from({ length: 5000 }, (_, i) => `node-${i}`));
  groupOps(COLL, 'clients', undefined, big, places);
  const joined = group([...big.clients, 'node-5000']);
  const ops = groupOps(COLL, 'clients', big, joined, places);
  t.same(
    ops.flatMap((op) => ('fields' in op ? op.fields : [])),
    [['c:node-5000', 5000]],
  );
  t.ok(JSON.stringify(ops).length < 1000, `${JSON.stringify(ops).length} bytes written, not the 5,000 names`);
  const left = group(joined.clients.filter((n) => n !== 'node-17'));
  t.same(
    groupOps(COLL, 'clients', joined, left, places).flatMap((op) => ('fields' in op ? op.fields : [])),
    [['c:node-17', null]],
  );
});

t.test('a hint that does not describe the change is not trusted', async (t) => {
  const places = new MemberPlaces();
  const before = group(['a', 'b']);
  groupOps(COLL, 'ops', undefined, before, places);
  const after = group(['a', 'c', 'd']);
  const fields = groupOps(COLL, 'ops', before, after, places, ['d']).flatMap((op) => ('fields' in op ? op.fields : []));
  t.same(
    fields.filter(([, place]) => place === null),
    [['c:b', null]],
    'b is removed though the hint says nothing of it',
  );
  t.same(
    fields.filter(([, place]) => place !== null).map(([f]) => f),
    ['c:c', 'c:d'],
  );
});

t.test('a group stored with its members in its document moves them to fields once, keeping their order', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'group-store-'));
  const store = new FileStore(dir);
  t.teardown(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  const key = await generateKeyPair();
  await persistWrites(store, 'acme', newOrgWrites('acme', 'Acme', key.publicKeyPem, Date.now()));
  const groups = orgCollection('acme', 'groups');
  await store.put(groups, 'ops', group(['db2', 'db1'], ['ruth']));
  t.same(await store.getFields(groups, 'ops'), new Map(), 'stored the old way');

  const first = await loadOrg(store, await store.get(ORGS, 'acme'));
  t.match(first.state.groups.get('ops'), { clients: ['db2', 'db1'], users: ['ruth'] });
  t.match(await store.get(groups, 'ops'), { name: 'ops', users: [], clients: [] }, 'the document lists nobody now');
  t.same([...(await store.getFields(groups, 'ops')).keys()].sort(), ['c:db1', 'c:db2', 'u:ruth']);

  const again = await loadOrg(store, await store.get(ORGS, 'acme'));
  t.match(again.state.groups.get('ops'), { clients: ['db2', 'db1'], users: ['ruth'] }, 'the same after a restart');
  t.match(again.state.groups.get('users'), first.state.groups.get('users'), 'the built-in groups too');
});

t.test('a stored member field that is not a place stops the load naming the group and the field', async (t) => {
  const places = new MemberPlaces();
  t.throws(() => withMembers(group([]), new Map([['c:db1', 'first']]), places), /group ops.*'c:db1'/);
  t.throws(() => withMembers(group([]), new Map([['x:db1', 0]]), places), /group ops.*'x:db1'/);
});
