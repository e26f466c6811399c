// Write-behind of node states: what changed goes to the store in one batch per flush, as stored (no `available`,
// `gateway` only when set); a failed batch is kept for the next flush; batches never overlap, and a dropped
// organization writes nothing more once the write under way is done.
import t from 'tap';
import { NodeStateWrites } from '../../actors/push/node-state-writes.js';
import type { NodeAvailability } from '../../actors/push/push-data.js';
import { NODE_STATES_MAP, nodeStatesCollection } from '../../src/store/collections.js';
import type { Store } from '../../src/store/store.js';
import { quietLogger } from '../support/logs.js';
import { turn } from '../support/manual-clock.js';

const ORG = 'acme';

interface Batch {
  collection: string;
  id: string;
  fields: Array<readonly [string, unknown]>;
  /** Settles this batch's write. */
  done: () => void;
  fail: (e: Error) => void;
}

/** A store whose putFields waits until the test settles each call. */
function fakeStore() {
  const batches: Batch[] = [];
  const store = {
    putFields: (collection: string, id: string, fields: ReadonlyArray<readonly [string, unknown]>) =>
      new Promise<void>((resolve, reject) =>
        batches.push({ collection, id, fields: [...fields], done: resolve, fail: reject }),
      ),
  } as unknown as Store;
  return { store, batches };
}

function record(node: string, over: Partial<NodeAvailability> = {}): NodeAvailability {
  return { node_name: node, status: 'up', updated_at: 1000, incarnation: `inc-${node}`, available: true, ...over };
}

function fixture() {
  const records = new Map<string, NodeAvailability>();
  const { store, batches } = fakeStore();
  const writes = new NodeStateWrites(ORG, records, store, quietLogger());
  return { records, batches, writes };
}

/** Whether `p` has settled after a few turns of the event loop; `p` is watched so a rejection is not unhandled. */
async function settledYet(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 5; i++) await turn();
  return settled;
}

t.test('the records changed since the last flush are written in one batch, as stored', async (t) => {
  const { records, batches, writes } = fixture();
  records.set('a', record('a', { gateway: 'member-b' }));
  records.set('b', record('b', { status: 'down', available: false, incarnation: null }));
  records.set('untouched', record('untouched'));
  writes.changed('a');
  writes.changed('b');
  writes.changed('a');
  const flushed = writes.flush();
  await turn();
  t.equal(batches.length, 1, 'one write');
  t.equal(batches[0]?.collection, nodeStatesCollection(ORG));
  t.equal(batches[0]?.id, NODE_STATES_MAP);
  t.same(
    batches[0]?.fields,
    [
      ['a', { node_name: 'a', status: 'up', updated_at: 1000, incarnation: 'inc-a', gateway: 'member-b' }],
      ['b', { node_name: 'b', status: 'down', updated_at: 1000, incarnation: null }],
    ],
    'each changed node once, with no `available` and a gateway only where set',
  );
  t.notOk('gateway' in (batches[0]?.fields[1]?.[1] as object), 'no gateway key where none is set');
  t.equal(await settledYet(flushed), false, 'the flush waits for the store');
  batches[0]?.done();
  await flushed;
  await writes.flush();
  t.equal(batches.length, 1, 'a flush with nothing changed writes nothing');
});

t.test('a node changed but with no record is left out of the batch', async (t) => {
  const { records, batches, writes } = fixture();
  records.set('a', record('a'));
  writes.changed('a');
  writes.changed('gone');
  const flushed = writes.flush();
  await turn();
  t.same(
    batches[0]?.fields.map(([n]) => n),
    ['a'],
  );
  batches[0]?.done();
  await flushed;
});

t.test('a failed batch rejects, and its nodes are written by the next flush as they are then', async (t) => {
  const { records, batches, writes } = fixture();
  records.set('a', record('a'));
  writes.changed('a');
  const first = writes.flush();
  await turn();
  batches[0]?.fail(new Error('store down'));
  await t.rejects(first, /store down/, 'the flush rejects');
  records.set('a', record('a', { status: 'down', updated_at: 2000 }));
  const second = writes.flush();
  await turn();
  t.equal(batches.length, 2, 'written again');
  t.same(batches[1]?.fields, [['a', { node_name: 'a', status: 'down', updated_at: 2000, incarnation: 'inc-a' }]]);
  batches[1]?.done();
  await second;
});

t.test('settled never rejects, and keeps a failed batch for the next flush all the same', async (t) => {
  const { records, batches, writes } = fixture();
  records.set('a', record('a'));
  writes.changed('a');
  const s = writes.settled();
  await turn();
  batches[0]?.fail(new Error('store down'));
  t.equal(await s, undefined, 'resolved');
  const again = writes.flush();
  await turn();
  t.same(
    batches[1]?.fields.map(([n]) => n),
    ['a'],
  );
  batches[1]?.done();
  await again;
});

t.test('a second flush waits for the batch under way: batches never overlap', async (t) => {
  const { records, batches, writes } = fixture();
  records.set('a', record('a'));
  records.set('b', record('b'));
  writes.changed('a');
  const first = writes.flush();
  await turn();
  writes.changed('b');
  const second = writes.flush();
  for (let i = 0; i < 5; i++) await turn();
  t.equal(batches.length, 1, 'the second batch is not written while the first is under way');
  t.same(
    batches[0]?.fields.map(([n]) => n),
    ['a'],
  );
  batches[0]?.done();
  await first;
  await turn();
  t.equal(batches.length, 2, 'written once the first is stored');
  t.same(
    batches[1]?.fields.map(([n]) => n),
    ['b'],
    'holding what changed meanwhile',
  );
  t.equal(await settledYet(second), false, 'the second flush waits for its own batch');
  batches[1]?.done();
  await second;
});

t.test('a second flush waits for the first even when the first fails', async (t) => {
  const { records, batches, writes } = fixture();
  records.set('a', record('a'));
  records.set('b', record('b'));
  writes.changed('a');
  const first = writes.flush();
  first.catch(() => undefined);
  await turn();
  writes.changed('b');
  const second = writes.flush();
  for (let i = 0; i < 5; i++) await turn();
  t.equal(batches.length, 1);
  batches[0]?.fail(new Error('store down'));
  await t.rejects(first);
  await turn();
  t.equal(batches.length, 2, 'the next batch goes after the failed one');
  t.same(batches[1]?.fields.map(([n]) => n).sort(), ['a', 'b'], "the failed batch's nodes with the new change");
  batches[1]?.done();
  await second;
});

t.test('drop clears what waits and resolves only once the write under way is done', async (t) => {
  const { records, batches, writes } = fixture();
  records.set('a', record('a'));
  records.set('b', record('b'));
  writes.changed('a');
  const first = writes.flush();
  await turn();
  writes.changed('b');
  const dropped = writes.drop();
  t.equal(await settledYet(dropped), false, 'drop waits for the write under way');
  batches[0]?.done();
  await first;
  await dropped;
  await writes.flush();
  t.equal(batches.length, 1, 'the change waiting at the drop is never written');
});

t.test(
  'a batch that fails while the organization is dropped is not written again, nor are later changes',
  async (t) => {
    const { records, batches, writes } = fixture();
    records.set('a', record('a'));
    writes.changed('a');
    const first = writes.flush();
    await turn();
    const dropped = writes.drop();
    batches[0]?.fail(new Error('the store is away'));
    await t.rejects(first);
    await dropped;
    writes.changed('a');
    await writes.flush();
    t.equal(batches.length, 1, 'nothing of a dropped organization is written after the failed batch');
  },
);

t.test('writeAll writes every record as stored, changed or not', async (t) => {
  const { records, batches, writes } = fixture();
  records.set('a', record('a', { gateway: 'g' }));
  records.set('b', record('b', { available: false }));
  const all = writes.writeAll();
  await turn();
  t.same(batches[0]?.fields, [
    ['a', { node_name: 'a', status: 'up', updated_at: 1000, incarnation: 'inc-a', gateway: 'g' }],
    ['b', { node_name: 'b', status: 'up', updated_at: 1000, incarnation: 'inc-b' }],
  ]);
  batches[0]?.done();
  await all;
});
