// Group commit of an organization's plain writes: applied at once, answered once stored, gathered while a batch is
// stored, and undone (with everything decided on top of them) when the store refuses. The batcher runs on a manual
// clock: how long a write took, and the rest after it, are the clock's time, moved by the test.
import t from 'tap';
import { emptyOrgState, type OrgState, type OrgWrite } from '../../actors/org/org-state.js';
import { batchable, WriteBatcher } from '../../actors/org/write-batch.js';
import type { GroupDoc, OrgDoc } from '../../actors/shared/documents.js';
import { ManualClock, turn as tick } from '../support/manual-clock.js';

const ORG = { name: 'acme', full_name: 'Acme', guid: 'g', acl: {}, created_at: 0 } as unknown as OrgDoc;
const node = (name: string, role = 'web'): OrgWrite => ({ coll: 'nodes', id: name, doc: { name, body: { role } } });

/** A store whose writes wait until the test lets them through, or refuses them. */
function gate() {
  const calls: Array<{
    writes: readonly OrgWrite[];
    before: ReadonlyMap<string, GroupDoc>;
    pass(): void;
    refuse(e: Error): void;
  }> = [];
  const stored: string[][] = [];
  const clock = new ManualClock();
  const ports = {
    store: (writes: readonly OrgWrite[], before: ReadonlyMap<string, GroupDoc>) =>
      new Promise<void>((pass, refuse) => calls.push({ writes, before, pass, refuse })),
    stored: (writes: readonly OrgWrite[]) => stored.push(writes.map((w) => w.id)),
    timers: clock,
  };
  /** The batcher may rest before its next write (as long as the last one took): lets it run until that write starts. */
  const nthCall = (n: number) => clock.until(`write ${n} to start`, () => calls.length >= n);
  return { calls, stored, ports, clock, nthCall };
}
const names = (s: OrgState) => [...s.nodes.keys()].sort();

t.test('writes apply at once, are answered once stored, and gather while a batch is stored', async (t) => {
  const state = emptyOrgState(ORG);
  const { calls, stored, ports, nthCall } = gate();
  const batcher = new WriteBatcher(state, ports);
  const answers: string[] = [];
  batcher.add([node('a')], () => answers.push('a'));
  t.same(names(state), ['a'], 'the next request decides on the new node');
  batcher.add([node('b')], () => answers.push('b'));
  batcher.add([node('c')], () => answers.push('c'));
  await tick();
  t.equal(calls.length, 1, 'one write in flight');
  t.same(
    calls[0]?.writes.map((w) => w.id),
    ['a'],
  );
  t.ok(batcher.pending);
  calls[0]?.pass();
  await tick();
  t.same(answers, ['a'], 'a is answered once stored; b and c wait for their batch');
  await nthCall(2);
  t.same(
    calls[1]?.writes.map((w) => w.id),
    ['b', 'c'],
    'b and c gathered into one write',
  );
  calls[1]?.pass();
  await batcher.drain();
  t.same(answers, ['a', 'b', 'c']);
  t.same(stored, [['a'], ['b', 'c']], 'the directory hears of each batch once it is stored');
  t.notOk(batcher.pending);
});

t.test('a refused batch is undone with everything gathered after it, newest first', async (t) => {
  const state = emptyOrgState(ORG);
  state.nodes.set('old', { name: 'old', body: { role: 'db' } });
  const { calls, stored, ports, nthCall } = gate();
  const batcher = new WriteBatcher(state, ports);
  const errors: unknown[] = [];
  const settled = (e?: unknown) => errors.push(e);
  batcher.add([node('old', 'web'), node('x')], settled);
  batcher.add([{ coll: 'nodes', id: 'old', doc: null }, node('x', 'api')], settled);
  await tick();
  t.same(names(state), ['x'], 'applied before stored');
  const down = new Error('store down');
  calls[0]?.refuse(down);
  await batcher.drain();
  t.same(errors, [down, down], 'both requests hear the refusal');
  t.same(names(state), ['old'], 'x is gone and old is back');
  t.same(state.nodes.get('old'), { name: 'old', body: { role: 'db' } }, 'old has its stored role again');
  t.same(stored, [], 'the directory heard of nothing');
  t.equal(calls.length, 1, 'the later batch was never written');

  batcher.add([node('y')], settled);
  await nthCall(2);
  calls[1]?.pass();
  await batcher.drain();
  t.same(names(state), ['old', 'y'], 'the batcher goes on after a refusal');
});

t.test('the organization document itself is never batched', async (t) => {
  t.ok(batchable([node('a')]));
  t.notOk(batchable([]));
  t.notOk(batchable([node('a'), { coll: 'org', id: 'acme', doc: null }]));
});

t.test('a document written twice in a batch is stored once, as last written', async (t) => {
  const state = emptyOrgState(ORG);
  const { calls, ports, nthCall } = gate();
  const batcher = new WriteBatcher(state, ports);
  batcher.add([node('a')], () => undefined);
  batcher.add([node('b', 'web')], () => undefined);
  batcher.add([node('c')], () => undefined);
  batcher.add([node('b', 'db')], () => undefined);
  calls[0]?.pass();
  await nthCall(2);
  t.same(
    calls[1]?.writes.map((w) => [w.id, w.doc]),
    [
      ['c', { name: 'c', body: { role: 'web' } }],
      ['b', { name: 'b', body: { role: 'db' } }],
    ],
  );
  calls[1]?.pass();
  await batcher.drain();
  t.same(state.nodes.get('b'), { name: 'b', body: { role: 'db' } });
});

t.test('registrations gathered in a batch store the clients group once, with every client they added', async (t) => {
  const state = emptyOrgState(ORG);
  const acl = { users: [], clients: [], groups: [] };
  const g0: GroupDoc = {
    name: 'clients',
    users: [],
    clients: ['old'],
    groups: [],
    acl: { create: acl, read: acl, update: acl, delete: acl, grant: acl },
  };
  state.groups.set('clients', g0);
  const { calls, ports, nthCall } = gate();
  const batcher = new WriteBatcher(state, ports);
  const register = (name: string, hint = true): OrgWrite => {
    const g = state.groups.get('clients') as GroupDoc;
    const doc = { ...g, clients: [...g.clients, name] };
    return hint
      ? { coll: 'groups', id: 'clients', doc, appendedClients: [name] }
      : { coll: 'groups', id: 'clients', doc };
  };
  batcher.add([node('first')], () => undefined);
  for (const name of ['a', 'b', 'c']) batcher.add([register(name)], () => undefined);
  calls[0]?.pass();
  await nthCall(2);
  t.match(calls[1]?.writes, [
    { id: 'clients', doc: { clients: ['old', 'a', 'b', 'c'] }, appendedClients: ['a', 'b', 'c'] },
  ]);
  t.same(calls[1]?.before.get('clients'), g0, 'stored as it was before the batch');
  batcher.add([register('d')], () => undefined);
  batcher.add([register('e', false)], () => undefined);
  calls[1]?.pass();
  await nthCall(3);
  t.notOk(
    calls[2]?.writes.some((w) => w.coll === 'groups' && w.appendedClients),
    'a write in the batch without the hint drops it for the group',
  );
  calls[2]?.pass();
  await batcher.drain();
});

t.test('after a slow write the next batch rests as long, gathering what comes meanwhile', async (t) => {
  const state = emptyOrgState(ORG);
  const { calls, ports, clock } = gate();
  const batcher = new WriteBatcher(state, ports);
  batcher.add([node('a')], () => undefined);
  batcher.add([node('b')], () => undefined);
  await clock.advance(40);
  calls[0]?.pass();
  await tick();
  batcher.add([node('c')], () => undefined);
  await clock.advance(39);
  t.equal(calls.length, 1, '39 ms after a write that took 40, the next has not begun');
  await clock.advance(1);
  t.equal(calls.length, 2, 'and begins once it has rested 40 ms');
  t.same(
    calls[1]?.writes.map((w) => w.id),
    ['b', 'c'],
    'what came during the rest joined the batch',
  );
  calls[1]?.pass();
  await batcher.drain();
});

t.test('a read is answered once the writes it saw are stored, while later writes go on applying', async (t) => {
  const state = emptyOrgState(ORG);
  const { calls, ports, nthCall } = gate();
  const batcher = new WriteBatcher(state, ports);
  const heard: string[] = [];
  batcher.afterApplied(() => heard.push('read before any write'));
  t.same(heard, ['read before any write'], 'nothing unstored: answered at once');

  batcher.add([node('a')], () => heard.push('a stored'));
  await tick();
  batcher.add([node('b')], () => heard.push('b stored'));
  batcher.afterApplied((e) => heard.push(e === undefined ? 'read of a and b' : 'read undone'));
  batcher.add([node('c')], () => heard.push('c stored'));
  t.same(names(state), ['a', 'b', 'c'], 'writes after the read still apply at once');
  calls[0]?.pass();
  await nthCall(2);
  t.same(heard, ['read before any write', 'a stored'], 'the read waits for b, which it saw');
  calls[1]?.pass();
  await batcher.drain();
  t.same(heard, ['read before any write', 'a stored', 'b stored', 'read of a and b', 'c stored']);

  batcher.add([node('d')], () => undefined);
  await tick();
  batcher.afterApplied((e) => heard.push(e === undefined ? 'read of d' : 'read of d undone'));
  calls[2]?.refuse(new Error('store down'));
  await batcher.drain();
  t.equal(heard.at(-1), 'read of d undone', 'a read of undone writes hears so, to be decided again');
  t.same(names(state), ['a', 'b', 'c']);
});
