// Session keys bound to a gateway: a member verifies only the nodes it is the gateway of, so a message captured at
// one gateway and replayed at another is never accepted there; a config request keeps a live node's gateway and
// key, and moves a node whose gateway is gone without cutting it off; and an owner knows every node's gateway.
import t from 'tap';
import { sessionsCollection } from '../../src/store/collections.js';
import type { Store } from '../../src/store/store.js';
import { SessionKeys } from '../../src/transport/session-keys.js';

const LIFETIME_S = 3600;

/** The four store calls SessionKeys makes, on a map: what one member writes, another reads. */
function sharedStore(): Store {
  const docs = new Map<string, Map<string, unknown>>();
  const coll = (name: string) => docs.get(name) ?? docs.set(name, new Map()).get(name)!;
  const store = {
    load: async (name: string) => [...coll(name)],
    get: async (name: string, id: string) => coll(name).get(id),
    put: async (name: string, id: string, doc: unknown) => void coll(name).set(id, structuredClone(doc)),
    putMany: async (name: string, many: ReadonlyArray<readonly [string, unknown]>) => {
      for (const [id, doc] of many) coll(name).set(id, structuredClone(doc));
    },
  };
  return store as unknown as Store;
}

t.test('only the gateway a session names verifies the node’s messages', async (t) => {
  const store = sharedStore();
  let now = 1_000_000;
  const owner = new SessionKeys(store, LIFETIME_S, () => now, 'a');
  const gateway = new SessionKeys(store, LIFETIME_S, () => now, 'b');
  const other = new SessionKeys(store, LIFETIME_S, () => now, 'c');
  const opened = await owner.open('acme', 'n1', () => 'b');
  t.equal(opened.gateway, 'b', 'the session names its gateway');
  t.equal(owner.keyFor('acme', 'n1'), undefined, 'the owner that opened it does not verify with it');
  t.equal(owner.gatewayOf('acme', 'n1'), 'b', 'but knows where to send the node’s job messages');
  await gateway.reload('acme', 'n1');
  await other.load(['acme']);
  t.same(gateway.keyFor('acme', 'n1'), opened.key, 'the gateway verifies with it');
  t.equal(other.keyFor('acme', 'n1'), undefined, 'another member never does: a replay there is dropped');
  now += 1000;
  const again = await owner.open('acme', 'n1', (current) => current);
  t.same(again.key, opened.key, 'a config request while the gateway lives hands out the same key');
  t.equal(again.gateway, 'b');
});

t.test('a node whose gateway is gone moves to another, keeping its fresh key', async (t) => {
  const store = sharedStore();
  const now = 1_000_000;
  const owner = new SessionKeys(store, LIFETIME_S, () => now, 'a');
  const first = await owner.open('acme', 'n1', () => 'b');
  const moved = await owner.open('acme', 'n1', () => 'c');
  t.same(moved.key, first.key, 'the key stays: the client is not cut off');
  t.equal(moved.gateway, 'c', 'the session names the new gateway');
  const old = new SessionKeys(store, LIFETIME_S, () => now, 'b');
  const fresh = new SessionKeys(store, LIFETIME_S, () => now, 'c');
  await old.load(['acme']);
  await fresh.load(['acme']);
  t.equal(old.keyFor('acme', 'n1'), undefined, 'the gateway it left no longer accepts it');
  t.same(fresh.keyFor('acme', 'n1'), first.key, 'the new one does');
  t.same(
    ((await store.get(sessionsCollection('acme'), 'n1')) as { gateway?: string }).gateway,
    'c',
    'as stored, for whichever process reads it next',
  );
});

t.test('on one process sessions name no gateway and verify as before', async (t) => {
  const store = sharedStore();
  const keys = new SessionKeys(store, LIFETIME_S, () => 1_000_000);
  const opened = await keys.open('acme', 'n1');
  t.equal(opened.gateway, undefined);
  t.same(keys.keyFor('acme', 'n1'), opened.key);
  t.equal(keys.gatewayOf('acme', 'n1'), undefined);
});

t.test('a message with no key here reads the organization once, then single nodes, within a budget', async (t) => {
  const store = sharedStore();
  let now = 1_000_000;
  const owner = new SessionKeys(store, LIFETIME_S, () => now, 'a');
  await owner.open('acme', 'n1', () => 'b');
  const gateway = new SessionKeys(store, LIFETIME_S, () => now, 'b');
  const reads: string[] = [];
  const counting = store as unknown as { load: Store['load']; get: Store['get'] };
  const { load, get } = counting;
  counting.load = (name) => (reads.push(`load ${name}`), load(name));
  counting.get = (name, id) => (reads.push(`get ${name}/${id}`), get(name, id));
  gateway.missing('acme', 'n1');
  gateway.missing('acme', 'n1');
  await Promise.resolve();
  t.same(reads, [`load ${sessionsCollection('acme')}`], 'one read of the organization for many messages');
  await new Promise<void>((resolve) => setImmediate(resolve));
  t.ok(gateway.keyFor('acme', 'n1'), 'after which the node verifies');
  now += 2000;
  gateway.missing('acme', 'n2');
  gateway.missing('acme', 'n2');
  t.same(reads.slice(1), [`get ${sessionsCollection('acme')}/n2`], 'later a node alone is read, once');
});

t.test('a session naming a gateway that is gone is taken over by the member that hears the node', async (t) => {
  const store = sharedStore();
  const now = 1_000_000;
  const owner = new SessionKeys(store, LIFETIME_S, () => now, 'a');
  const opened = await owner.open('acme', 'n1', () => 'dead');
  const successor = new SessionKeys(store, LIFETIME_S, () => now, 'b');
  await successor.load(['acme']);
  t.equal(successor.keyFor('acme', 'n1'), undefined, 'not verified here while its gateway may live');
  t.equal(
    successor.adoptOrphan('acme', 'n1', (g) => g === 'dead'),
    undefined,
    'nor taken over while that gateway is alive',
  );
  t.same(
    successor.adoptOrphan('acme', 'n1', () => false),
    opened.key,
    'taken over once it is gone',
  );
  t.same(successor.keyFor('acme', 'n1'), opened.key, 'and verified here from then on');
  t.equal(successor.gatewayOf('acme', 'n1'), 'b');
  await owner.bind('acme', 'n1', 'b');
  t.same(
    ((await store.get(sessionsCollection('acme'), 'n1')) as { gateway?: string }).gateway,
    'b',
    'the owner stores the node’s new gateway',
  );
});
