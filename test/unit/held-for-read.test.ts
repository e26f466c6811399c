// Messages held while their node's read runs: each is handled again once the read settles, and at most 500 are
// held at once; a settled read frees its slot.
import t from 'tap';
import { HeldForRead, MAX_HELD_FOR_READ } from '../../src/transport/held-for-read.js';
import { turn } from '../support/manual-clock.js';

/** A read the test settles. */
function read() {
  let done!: () => void;
  const promise = new Promise<void>((resolve) => (done = resolve));
  return { promise, done };
}

t.test('a held message runs again once its read settles, not before', async (t) => {
  const held = new HeldForRead();
  const r = read();
  let again = 0;
  t.equal(
    held.hold(r.promise, () => again++),
    true,
    'held',
  );
  await turn();
  t.equal(again, 0, 'not while the read runs');
  r.done();
  await turn();
  t.equal(again, 1, 'once it is done');
});

t.test('messages held on one read all run again once it settles', async (t) => {
  const held = new HeldForRead();
  const r = read();
  const ran: number[] = [];
  for (const i of [1, 2, 3]) held.hold(r.promise, () => ran.push(i));
  r.done();
  await turn();
  t.same(ran, [1, 2, 3]);
});

t.test('at most 500 are held at once: the 501st is refused and never runs', async (t) => {
  t.equal(MAX_HELD_FOR_READ, 500);
  const held = new HeldForRead();
  const r = read();
  let again = 0;
  const accepted = Array.from({ length: 500 }, () => held.hold(r.promise, () => again++));
  t.ok(
    accepted.every((a) => a),
    'the first 500 are held',
  );
  let refusedRan = false;
  t.equal(
    held.hold(read().promise, () => (refusedRan = true)),
    false,
    'the 501st is refused',
  );
  r.done();
  await turn();
  t.equal(again, 500, 'the 500 held ran again');
  t.equal(refusedRan, false, 'the refused one did not');
});

t.test('a slot frees once its read settles', async (t) => {
  const held = new HeldForRead();
  const first = read();
  const rest = read();
  held.hold(first.promise, () => {});
  for (let i = 1; i < MAX_HELD_FOR_READ; i++) held.hold(rest.promise, () => {});
  t.equal(
    held.hold(read().promise, () => {}),
    false,
    'full',
  );
  first.done();
  await turn();
  let ran = false;
  const late = read();
  t.equal(
    held.hold(late.promise, () => (ran = true)),
    true,
    'one slot free again',
  );
  t.equal(
    held.hold(read().promise, () => {}),
    false,
    'and only one',
  );
  late.done();
  await turn();
  t.equal(ran, true);
});
