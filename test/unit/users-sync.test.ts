// What another server's account and membership changes, read again from the store, do to this server's users
// state: which accounts change, which organizations hear of a deletion or a rename, what the membership index
// holds after a reload, and when a membership left behind by a lost deletion is dropped.
import t from 'tap';
import type { UserDoc } from '../../actors/shared/documents.js';
import type { UsersState } from '../../actors/users/users-state.js';
import {
  accountChanges,
  forgetOrg,
  hintFanOut,
  hintOfWrites,
  indexOf,
  reconcile,
  setMembership,
  usersHintSchema,
} from '../../actors/users/users-sync.js';

const emptyAce = { users: [], clients: [], groups: [] };
const acl = { create: emptyAce, read: emptyAce, update: emptyAce, delete: emptyAce, grant: emptyAce };
const user = (username: string, email = `${username}@example.com`): UserDoc => ({
  username,
  email,
  display_name: username,
  superuser: false,
  keys: {},
  acl,
});
const info = (org: string) => ({ full_name: org.toUpperCase(), guid: `guid-${org}` });

function stateOf(users: UserDoc[], memberships: Record<string, string[]> = {}, admins: string[] = []): UsersState {
  const orgs = new Set(Object.values(memberships).flat());
  const members = new Map<string, string[]>();
  for (const [username, of] of Object.entries(memberships))
    for (const org of of) members.set(org, [...(members.get(org) ?? []), username]);
  const index = indexOf(new Map([...orgs].map((o) => [o, info(o)])), members);
  return { users: new Map(users.map((u) => [u.username, u])), serverAdmins: new Set(admins), ...index };
}

const membershipsOf = (state: { orgsOf: Map<string, Set<string>> }) =>
  Object.fromEntries([...state.orgsOf].map(([u, orgs]) => [u, [...orgs].sort()]));

t.test('an account written elsewhere changes here only where the store differs', async (t) => {
  const state = stateOf([user('alice'), user('bob')], {}, ['alice']);
  const changed = user('bob', 'bob@new.example.com');
  const writes = accountChanges(state, {
    users: new Map([
      ['alice', user('alice')],
      ['bob', changed],
      ['carol', user('carol')],
      ['dave', null],
    ]),
    serverAdmins: ['alice'],
  });
  t.same(
    writes,
    [
      { coll: 'users', id: 'bob', doc: changed },
      { coll: 'users', id: 'carol', doc: user('carol') },
    ],
    'a new key or email and a new account; an unchanged account and an unknown missing one are left alone',
  );
  t.same(
    accountChanges(state, { users: new Map([['alice', null]]), serverAdmins: ['bob', 'alice'] }),
    [
      { coll: 'users', id: 'alice', doc: null },
      { coll: 'server-admins', users: ['alice', 'bob'] },
    ],
    'an account gone from the store is deleted here, and server-admins follows the store',
  );
});

t.test('a deletion made elsewhere tells the organizations the user belonged to', async (t) => {
  const state = stateOf([user('alice')], { alice: ['acme', 'beta'] });
  t.same(hintFanOut(state, { type: 'users', names: ['alice'], deleted: 'alice' }), {
    deletedFrom: { username: 'alice', orgs: ['acme', 'beta'] },
  });
  t.same(
    hintFanOut(state, { type: 'users', names: ['bob', 'alice'], renamed: { from: 'alice', to: 'bob' } }),
    { renamed: { from: 'alice', to: 'bob' } },
    'a rename is applied to the organizations as here',
  );
  t.same(hintFanOut(state, { type: 'users', names: ['alice'] }), {}, 'a key change tells no organization');
});

t.test('the hint of a write names the accounts written, never their documents', async (t) => {
  const hint = hintOfWrites(
    [
      { coll: 'users', id: 'bob', doc: user('bob') },
      { coll: 'users', id: 'alice', doc: null },
      { coll: 'server-admins', users: ['bob'] },
    ],
    undefined,
    { from: 'alice', to: 'bob' },
  );
  t.same(hint, { type: 'users', names: ['bob', 'alice'], renamed: { from: 'alice', to: 'bob' } });
  t.same(hintOfWrites([{ coll: 'server-admins', users: [] }]), { type: 'users', names: [] }, 'server-admins alone');
  t.equal(hintOfWrites([]), undefined, 'nothing written, nothing told');
  t.ok(usersHintSchema.safeParse(hint).success, 'what is sent is what receivers accept');
  t.notOk(usersHintSchema.safeParse({ type: 'users', names: 'alice' }).success, 'a malformed hint is refused');
});

t.test('memberships and organizations come and go in the index', async (t) => {
  const state = stateOf([user('alice'), user('bob')], { alice: ['acme'] });
  setMembership(state, 'beta', 'alice', true);
  setMembership(state, 'beta', 'bob', true);
  setMembership(state, 'acme', 'alice', false);
  t.same(membershipsOf(state), { alice: ['beta'], bob: ['beta'] });
  forgetOrg(state, 'beta');
  t.same(membershipsOf(state), {}, 'a deleted organization takes its memberships along');
  t.notOk(state.orgInfo.has('beta'));
});

t.test('a reload brings accounts and the index to the store', async (t) => {
  const state = stateOf([user('alice'), user('gone')], { alice: ['acme'] });
  const index = indexOf(
    new Map([
      ['acme', info('acme')],
      ['beta', info('beta')],
    ]),
    new Map([
      ['acme', ['alice']],
      ['beta', ['alice', 'bob']],
    ]),
  );
  const out = reconcile(
    state,
    {
      users: new Map([
        ['alice', user('alice')],
        ['bob', user('bob')],
      ]),
      serverAdmins: [],
    },
    index,
    new Set(),
  );
  t.same(out.writes, [
    { coll: 'users', id: 'bob', doc: user('bob') },
    { coll: 'users', id: 'gone', doc: null },
  ]);
  t.same(
    membershipsOf(out.index),
    { alice: ['acme', 'beta'], bob: ['beta'] },
    'memberships of organizations served anywhere',
  );
  t.same([...out.index.orgInfo.keys()].sort(), ['acme', 'beta']);
  t.same(out.orphans, []);
});

t.test('a membership of an account gone from the store is dropped once two reloads see it', async (t) => {
  const stored = { users: new Map([['alice', user('alice')]]), serverAdmins: [] };
  const index = () => indexOf(new Map([['acme', info('acme')]]), new Map([['acme', ['alice', 'gone']]]));
  const state = stateOf([user('alice')]);
  const first = reconcile(state, stored, index(), new Set());
  t.same(first.orphans, [], 'not at the first: a rename may be on its way to the organization');
  t.same(membershipsOf(first.index), { alice: ['acme'], gone: ['acme'] });
  const second = reconcile(state, stored, index(), first.suspects);
  t.same(second.orphans, [{ org: 'acme', username: 'gone' }], 'the second drops it as on a deletion');
  t.same(membershipsOf(second.index), { alice: ['acme'] });
  t.same(second.suspects, new Set(), 'nothing left to suspect');

  const renamed = reconcile(
    state,
    { users: new Map([...stored.users, ['gone', user('gone')]]), serverAdmins: [] },
    index(),
    first.suspects,
  );
  t.same(renamed.orphans, [], 'an account that came back in between keeps its membership');
});
