// The store as the server uses it: an operation that takes longer than store_timeout is refused at that moment
// (a request answers 503 rather than hang through an outage), the store counts as failing from then until an
// operation succeeds, and each write is timed for the metrics. The bound runs on a manual clock, over a store
// whose answers the test gives.
import t from 'tap';
import type { Store } from '../../src/store/store.js';
import { StoreUnavailableError, WatchedStore, type StoreWriteOp } from '../../src/store/watched-store.js';
import { ManualClock } from '../support/manual-clock.js';

const TIMEOUT_MS = 5000;

/** A store whose every put and get waits until the test answers it. */
function heldStore() {
  const waiting: Array<() => void> = [];
  const held = <T>(value: T) => new Promise<T>((resolve) => waiting.push(() => resolve(value)));
  const store = {
    kind: 'file',
    get: () => held({ found: true }),
    put: () => held(undefined),
  } as unknown as Store;
  return { store, answer: () => waiting.shift()?.() };
}

t.test(
  'an operation unanswered for store_timeout is refused then, and the store fails until one succeeds',
  async (t) => {
    const clock = new ManualClock();
    const { store, answer } = heldStore();
    const writes: Array<[StoreWriteOp, number, string | null]> = [];
    const watched = new WatchedStore(store, TIMEOUT_MS, {
      now: () => 1_000_000 + clock.now(),
      timers: clock,
      observeWrite: (op, seconds, failure) => writes.push([op, seconds, failure]),
    });
    let outcome: unknown = 'pending';
    void watched.put('orgs', 'acme', {}).then(
      () => (outcome = 'stored'),
      (e: unknown) => (outcome = e),
    );
    await clock.advance(TIMEOUT_MS - 1);
    t.equal(outcome, 'pending', 'still waited for just before store_timeout');
    t.equal(watched.failingSince, null, 'and the store does not count as failing yet');
    await clock.advance(1);
    t.ok(outcome instanceof StoreUnavailableError, 'refused at store_timeout');
    t.match(String(outcome), /did not answer put within 5000 ms/);
    t.equal(watched.failingSince, 1_000_000 + TIMEOUT_MS, 'failing from the refusal');
    t.same(writes, [['put', TIMEOUT_MS / 1000, 'timeout']], 'the write is timed, as a timeout');

    answer(); // the late answer to the refused put changes nothing
    const got = watched.get('orgs', 'acme');
    await clock.advance(1200);
    answer();
    t.same(await got, { found: true }, 'an operation answered in time gets its answer');
    t.equal(watched.failingSince, null, 'and ends the failing spell');
    t.equal(clock.pending, 0, 'its bound is cancelled');
  },
);

t.test('a write answered in time is timed on the clock', async (t) => {
  const clock = new ManualClock();
  const { store, answer } = heldStore();
  const writes: Array<[StoreWriteOp, number, string | null]> = [];
  const watched = new WatchedStore(store, TIMEOUT_MS, {
    timers: clock,
    observeWrite: (op, seconds, failure) => writes.push([op, seconds, failure]),
  });
  const put = watched.put('orgs', 'acme', {});
  await clock.advance(250);
  answer();
  await put;
  t.same(writes, [['put', 0.25, null]]);
});
