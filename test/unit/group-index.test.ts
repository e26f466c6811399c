// The membership index behind every ACL check: after any sequence of group changes it must say exactly what a
// scan of the groups would say, and a client created in a large organization must not cost a pass over the list.
import fc from 'fast-check';
import t from 'tap';
import { GroupIndex, groupsOf, type Group } from '../../src/auth/acl.js';

const group = (name: string, clients: string[], users: string[] = [], groups: string[] = []): Group => ({
  name,
  users,
  clients,
  groups,
});

/** What the index must agree with: the groups listing the member themselves. */
function scanned(groups: ReadonlyMap<string, Group>, kind: 'user' | 'client', name: string): string[] {
  return [...groups.values()]
    .filter((g) => (kind === 'user' ? g.users : g.clients).includes(name))
    .map((g) => g.name)
    .sort();
}

t.test('a client appended to the clients group is found there, and gone once deleted', async (t) => {
  const index = new GroupIndex();
  const g0 = group('clients', ['a', 'b']);
  index.update('clients', undefined, g0);
  const g1 = { ...g0, clients: [...g0.clients, 'c'] };
  index.update('clients', g0, g1);
  t.same([...index.directGroups({ kind: 'client', name: 'c' })], ['clients']);
  t.same([...index.directGroups({ kind: 'user', name: 'c' })], [], 'a user of the same name is another member');
  const g2 = { ...g1, clients: ['a', 'c'] };
  index.update('clients', g1, g2);
  t.same([...index.directGroups({ kind: 'client', name: 'b' })], [], 'b left');
  t.same([...index.directGroups({ kind: 'client', name: 'c' })], ['clients'], 'c stayed');
  index.update('clients', g2, undefined);
  t.same([...index.directGroups({ kind: 'client', name: 'a' })], [], 'a removed group lists nobody');
});

t.test('a registration that says which clients it added is not compared, and a wrong hint is', async (t) => {
  const index = new GroupIndex();
  const g0 = group('clients', ['a', 'b']);
  index.update('clients', undefined, g0);
  const g1 = { ...g0, clients: [...g0.clients, 'c'] };
  index.update('clients', g0, g1, ['c']);
  t.same([...index.directGroups({ kind: 'client', name: 'c' })], ['clients']);
  const g2 = { ...g1, clients: ['a', 'd'] };
  index.update('clients', g1, g2, ['d']);
  t.same([...index.directGroups({ kind: 'client', name: 'b' })], [], 'b left, though the hint says only d joined');
  t.same([...index.directGroups({ kind: 'client', name: 'd' })], ['clients']);
});

t.test('a name listed twice stays a member while either entry does', async (t) => {
  const index = new GroupIndex();
  const g0 = group('ops', ['x', 'y', 'x']);
  index.update('ops', undefined, g0);
  const g1 = { ...g0, clients: ['x', 'y'] };
  index.update('ops', g0, g1);
  t.same([...index.directGroups({ kind: 'client', name: 'x' })], ['ops']);
});

t.test('nested groups are walked upward from the direct ones', async (t) => {
  const groups = new Map<string, Group>([
    ['clients', group('clients', ['n1'])],
    ['fleet', group('fleet', [], [], ['clients'])],
    ['all', group('all', [], [], ['fleet'])],
    ['admins', group('admins', [], ['alice'])],
  ]);
  const index = new GroupIndex();
  for (const [name, g] of groups) index.update(name, undefined, g);
  t.same([...groupsOf({ kind: 'client', name: 'n1' }, groups, index)].sort(), ['all', 'clients', 'fleet']);
  t.same([...groupsOf({ kind: 'user', name: 'n1' }, groups, index)], []);
  t.same([...groupsOf({ kind: 'user', name: 'alice' }, groups, index)], ['admins']);
});

t.test('after any sequence of changes the index agrees with a scan of the groups', async () => {
  const names = fc.constantFrom('a', 'b', 'c', 'd', 'e');
  const list = fc.array(names, { maxLength: 6 });
  const change = fc.record({
    group: fc.constantFrom('g1', 'g2', 'g3'),
    kind: fc.constantFrom('append', 'drop-last', 'replace', 'remove'),
    clients: list,
    users: list,
  });
  fc.assert(
    fc.property(fc.array(change, { maxLength: 25 }), (changes) => {
      const groups = new Map<string, Group>();
      const index = new GroupIndex();
      for (const c of changes) {
        const before = groups.get(c.group);
        let after: Group | undefined;
        if (c.kind === 'remove') after = undefined;
        else if (c.kind === 'replace' || !before) after = group(c.group, c.clients, c.users);
        else if (c.kind === 'append')
          after = { ...before, clients: [...before.clients, ...c.clients], users: [...before.users, ...c.users] };
        else after = { ...before, clients: before.clients.slice(0, -1), users: before.users.slice(0, -1) };
        index.update(c.group, before, after);
        if (after) groups.set(c.group, after);
        else groups.delete(c.group);
      }
      for (const kind of ['user', 'client'] as const)
        for (const name of ['a', 'b', 'c', 'd', 'e']) {
          const got = [...index.directGroups({ kind, name })].sort();
          if (JSON.stringify(got) !== JSON.stringify(scanned(groups, kind, name))) return false;
        }
      return true;
    }),
    { seed: 20261124, numRuns: 2000 },
  );
});
