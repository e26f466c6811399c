// Groups and containers over real HTTP (reference 4.4, 4.5; spec 5.4): listing, creation, members kept and
// ignored as the original does, rights through nested groups, cycles, renames and deletion.
import t from 'tap';
import { createClient, createMember, eachStore, expectAnswer, expectStatus } from '../support/api-fixtures.js';

const GROUPS = '/organizations/default/groups';
const CONTAINERS = '/organizations/default/containers';
const groupJson = (name: string, m: { users?: string[]; clients?: string[]; groups?: string[] } = {}) => ({
  actors: [...(m.clients ?? []), ...(m.users ?? [])],
  users: m.users ?? [],
  clients: m.clients ?? [],
  groups: m.groups ?? [],
  orgname: 'default',
  name,
  groupname: name,
});

eachStore(t, async (t, s) => {
  const nina = await createMember(t, s, 'default', 'nina');
  await createClient(t, s, 'default', 'gweb', 0, s.admin);

  await t.test('list and create groups', async (t) => {
    const list = expectStatus(t, await s.admin.request('GET', GROUPS), 200);
    t.same(Object.keys(list).sort(), ['admins', 'billing_admins', 'clients', 'public_key_read_access', 'users']);
    t.equal(list.admins, `${s.url}${GROUPS}/admins`);
    const res = await s.admin.request('POST', GROUPS, { id: 'ops', actors: { users: ['nina'] } });
    expectAnswer(t, res, 201, { uri: `${s.url}${GROUPS}/ops` });
    t.equal(res.headers.get('location'), `${s.url}${GROUPS}/ops`);
    expectAnswer(
      t,
      await s.admin.request('GET', `${GROUPS}/ops`),
      200,
      groupJson('ops'),
      'member fields of a create are ignored',
    );
    expectStatus(t, await s.admin.request('POST', GROUPS, { groupname: 'dev' }), 201, 'groupname');
    expectStatus(t, await s.admin.request('POST', GROUPS, { id: 'idwins', groupname: 'ignored' }), 201, 'id wins');
    expectStatus(t, await s.admin.request('GET', `${GROUPS}/idwins`), 200);
    expectStatus(t, await s.admin.request('GET', `${GROUPS}/ignored`), 404);
    for (const body of [{ name: 'byname' }, { id: 'Upper' }, { id: 'has space' }, { id: '' }, {}]) {
      expectAnswer(
        t,
        await s.admin.request('POST', GROUPS, body),
        400,
        { error: ['Invalid group name.'] },
        JSON.stringify(body),
      );
    }
    expectAnswer(t, await s.admin.request('POST', GROUPS, { id: 'ops' }), 409, { error: ['Group already exists'] });
    expectAnswer(
      t,
      await nina.request('POST', GROUPS, { id: 'ninas' }),
      403,
      { error: ['missing create permission'] },
      'users may not create groups',
    );
    expectAnswer(t, await s.admin.request('GET', `${GROUPS}/nope`), 404, { error: ['Cannot load group nope'] });
  });

  await t.test('PUT sets members; a missing list keeps them; unknown names are ignored', async (t) => {
    const all = { users: ['nina', 'admin'], clients: ['gweb'], groups: ['dev'] };
    const res = await s.admin.request('PUT', `${GROUPS}/ops`, { groupname: 'ops', orgname: 'default', actors: all });
    expectAnswer(t, res, 200, groupJson('ops', all));
    expectAnswer(t, await s.admin.request('GET', `${GROUPS}/ops`), 200, groupJson('ops', all));

    expectStatus(t, await s.admin.request('PUT', `${GROUPS}/ops`, { actors: { users: ['nina', 'ghost'] } }), 200);
    expectAnswer(
      t,
      await s.admin.request('GET', `${GROUPS}/ops`),
      200,
      groupJson('ops', { ...all, users: ['nina'] }),
      'clients and groups kept, ghost ignored',
    );
    expectStatus(t, await s.admin.request('PUT', `${GROUPS}/ops`, { groupname: 'ops' }), 200, 'no actors at all');
    expectAnswer(
      t,
      await s.admin.request('GET', `${GROUPS}/ops`),
      200,
      groupJson('ops', { ...all, users: ['nina'] }),
      'nothing changed',
    );
    // knife puts clients under users and leaves clients out (reference 4.4).
    expectStatus(
      t,
      await s.admin.request('PUT', `${GROUPS}/ops`, {
        groupname: 'ops',
        actors: { users: ['gweb', 'nina', 'admin'], groups: ['dev'] },
      }),
      200,
    );
    expectAnswer(t, await s.admin.request('GET', `${GROUPS}/ops`), 200, groupJson('ops', all), 'knife body');
    expectStatus(
      t,
      await s.admin.request('PUT', `${GROUPS}/ops`, {
        actors: { users: [], clients: ['nobody'], groups: ['no-group'] },
      }),
      200,
    );
    expectAnswer(t, await s.admin.request('GET', `${GROUPS}/ops`), 200, groupJson('ops'), 'emptied');
    expectAnswer(t, await nina.request('PUT', `${GROUPS}/ops`, { actors: { users: ['nina'] } }), 403, {
      error: ['missing update permission'],
    });
    expectAnswer(t, await s.admin.request('PUT', `${GROUPS}/nope`, { actors: {} }), 404, {
      error: ['Cannot load group nope'],
    });
  });

  await t.test('membership through nested groups grants rights three levels deep', async (t) => {
    for (const g of ['lvl1', 'lvl2', 'lvl3']) expectStatus(t, await s.admin.request('POST', GROUPS, { id: g }), 201);
    expectAnswer(
      t,
      await nina.request('GET', `${GROUPS}/admins`),
      403,
      { error: ['missing read permission'] },
      'before',
    );
    expectStatus(t, await s.admin.request('PUT', `${GROUPS}/lvl3`, { actors: { users: ['nina'] } }), 200);
    expectStatus(t, await s.admin.request('PUT', `${GROUPS}/lvl2`, { actors: { groups: ['lvl3'] } }), 200);
    expectStatus(t, await s.admin.request('PUT', `${GROUPS}/lvl1`, { actors: { groups: ['lvl2'] } }), 200);
    expectStatus(t, await s.admin.request('PUT', `${GROUPS}/admins`, { actors: { groups: ['lvl1'] } }), 200);
    t.match(
      expectStatus(
        t,
        await nina.request('GET', `${GROUPS}/admins`),
        200,
        'nina reads admins through lvl3 > lvl2 > lvl1',
      ),
      { users: ['pivotal', 'admin'], groups: ['lvl1'] },
    );
    expectStatus(t, await nina.request('POST', GROUPS, { id: 'nested-made' }), 201, 'and creates groups as an admin');
    expectStatus(t, await s.admin.request('PUT', `${GROUPS}/lvl2`, { actors: { groups: [] } }), 200, 'cut the chain');
    expectAnswer(
      t,
      await nina.request('GET', `${GROUPS}/admins`),
      403,
      { error: ['missing read permission'] },
      'after',
    );
    expectStatus(t, await s.admin.request('PUT', `${GROUPS}/lvl2`, { actors: { groups: ['lvl3'] } }), 200);
  });

  await t.test('a change that closes a cycle is a 400 and changes nothing', async (t) => {
    const before = (await s.admin.request('GET', `${GROUPS}/lvl3`)).body;
    for (const [group, child] of [
      ['lvl3', 'lvl1'],
      ['lvl3', 'admins'],
      ['lvl1', 'lvl1'],
    ] as const) {
      const res = await s.admin.request('PUT', `${GROUPS}/${group}`, { actors: { groups: [child] } });
      expectAnswer(
        t,
        res,
        400,
        { error: [`Adding group '${child}' to group '${group}' would create a cycle`] },
        `${child} into ${group}`,
      );
    }
    expectAnswer(t, await s.admin.request('GET', `${GROUPS}/lvl3`), 200, before);
  });

  await t.test('rename keeps nesting and rights; a taken name is a 409', async (t) => {
    const res = await s.admin.request('PUT', `${GROUPS}/lvl1`, { groupname: 'level-one' });
    expectAnswer(t, res, 201, groupJson('level-one', { groups: ['lvl2'] }));
    t.equal(res.headers.get('location'), `${s.url}${GROUPS}/level-one`);
    expectAnswer(t, await s.admin.request('GET', `${GROUPS}/lvl1`), 404, { error: ['Cannot load group lvl1'] });
    t.match(
      (await s.admin.request('GET', `${GROUPS}/admins`)).body,
      { groups: ['level-one'] },
      'admins holds the new name',
    );
    expectStatus(t, await nina.request('GET', `${GROUPS}/admins`), 200, 'nina keeps her rights');
    expectAnswer(t, await s.admin.request('PUT', `${GROUPS}/level-one`, { groupname: 'dev' }), 409, {
      error: 'Group already exists',
    });
    expectAnswer(t, await s.admin.request('PUT', `${GROUPS}/level-one`, { groupname: 'Bad' }), 400, {
      error: ["Field 'groupname' invalid"],
    });
  });

  await t.test('DELETE answers the group and removes it from its parents', async (t) => {
    const shown = (await s.admin.request('GET', `${GROUPS}/level-one`)).body;
    expectAnswer(t, await s.admin.request('DELETE', `${GROUPS}/level-one`), 200, shown);
    expectAnswer(t, await s.admin.request('GET', `${GROUPS}/level-one`), 404, {
      error: ['Cannot load group level-one'],
    });
    t.match((await s.admin.request('GET', `${GROUPS}/admins`)).body, { groups: [] });
    expectAnswer(
      t,
      await nina.request('GET', `${GROUPS}/admins`),
      403,
      { error: ['missing read permission'] },
      'the rights went with it',
    );
    expectStatus(t, await s.admin.request('POST', GROUPS, { id: 'level-one' }), 201, 'the name is free');
    t.match(
      (await s.admin.request('GET', `${GROUPS}/admins`)).body,
      { groups: [] },
      "and a new group of that name is nobody's member",
    );
    expectAnswer(t, await nina.request('DELETE', `${GROUPS}/ops`), 403, { error: ['missing delete permission'] });
  });

  await t.test('containers: list, create, show, delete; PUT is a 405', async (t) => {
    const list = expectStatus(t, await s.admin.request('GET', CONTAINERS), 200);
    t.equal(Object.keys(list).length, 12);
    t.equal(list.clients, `${s.url}${CONTAINERS}/clients`);
    const res = await s.admin.request('POST', CONTAINERS, { containername: 'extras' });
    expectAnswer(t, res, 201, { uri: `${s.url}${CONTAINERS}/extras` });
    t.equal(res.headers.get('location'), `${s.url}${CONTAINERS}/extras`);
    expectAnswer(t, await s.admin.request('GET', `${CONTAINERS}/extras`), 200, {
      containername: 'extras',
      containerpath: 'extras',
    });
    expectAnswer(t, await s.admin.request('POST', CONTAINERS, { containername: 'extras' }), 409, {
      error: ['Container already exists'],
    });
    expectAnswer(t, await s.admin.request('POST', CONTAINERS, { containername: 'bad name' }), 400, {
      error: ["Field 'containername' invalid"],
    });
    expectAnswer(t, await s.admin.request('POST', CONTAINERS, {}), 400, { error: ["Field 'containername' missing"] });
    t.equal((await s.admin.request('PUT', `${CONTAINERS}/extras`, { containername: 'extras' })).status, 405);
    expectAnswer(
      t,
      await nina.request('GET', `${CONTAINERS}/extras`),
      403,
      { error: ['missing read permission'] },
      'a new container holds only its creator',
    );
    expectAnswer(t, await s.admin.request('DELETE', `${CONTAINERS}/extras`), 200, {
      containername: 'extras',
      containerpath: 'extras',
    });
    expectAnswer(t, await s.admin.request('GET', `${CONTAINERS}/extras`), 404, {
      error: ['Cannot load container extras'],
    });
  });

  await t.test('ACL entries follow a renamed group and leave with a deleted one', async (t) => {
    const acl = '/organizations/default/clients/gweb/_acl';
    const readAce = async () =>
      ((await s.admin.request('GET', acl)).body as { read: { actors: string[]; groups: string[] } }).read;
    const before = await readAce();
    expectStatus(
      t,
      await s.admin.request('PUT', `${acl}/read`, {
        read: { actors: before.actors, groups: [...before.groups, 'ops'] },
      }),
      200,
    );
    expectStatus(t, await s.admin.request('PUT', `${GROUPS}/ops`, { groupname: 'ops2' }), 201);
    t.same((await readAce()).groups, [...before.groups, 'ops2'], 'renamed in the ACL');
    expectStatus(t, await s.admin.request('DELETE', `${GROUPS}/ops2`), 200);
    t.same((await readAce()).groups, before.groups, 'gone from the ACL');
    expectStatus(t, await s.admin.request('POST', GROUPS, { id: 'ops2' }), 201);
    t.same((await readAce()).groups, before.groups, 'a new group of the old name inherits nothing');
  });
});
