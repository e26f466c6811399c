// How the users actor of one process hears of the changes others make on the same store: every hint the bus
// brings is handed on once it passes its schema, and a reload comes after each reconnection of the bus and every
// RELOAD_MS (for the hints lost), until the stop. The reload timer runs on a manual clock.
import { spawn, start, stop } from 'nact';
import t from 'tap';
import { followHints, RELOAD_MS, type CatchUpMsg } from '../../actors/users/users-catch-up.js';
import type { HintBus } from '../../actors/users/users-sync.js';
import { quietLogger } from '../support/logs.js';
import { ManualClock, turn } from '../support/manual-clock.js';

type Listener = Parameters<HintBus['listen']>[0];

/** A users actor that keeps what it is told, and a bus the test speaks through. */
function followed() {
  const system = start();
  const got: CatchUpMsg[] = [];
  const users = spawn(system, (state: null, msg: CatchUpMsg) => {
    got.push(msg);
    return state;
  });
  const heard: { listener?: Listener } = {};
  const bus: HintBus = {
    publish: () => undefined,
    listen: async (listener) => {
      heard.listener = listener;
    },
  };
  return { system, users, got, bus, listener: () => heard.listener as Listener };
}

/** Turns enough for nact to deliver what was dispatched. */
async function delivered(): Promise<void> {
  for (let i = 0; i < 20; i++) await turn();
}

t.test('a reload every RELOAD_MS and after each reconnection, none after the stop', async (t) => {
  const { system, users, got, bus, listener } = followed();
  t.teardown(() => stop(system));
  const clock = new ManualClock();
  const stopFollowing = await followHints(users, bus, quietLogger(), clock);
  const reloads = () => got.filter((m) => m.type === 'reload').length;

  await clock.advance(RELOAD_MS - 1);
  await delivered();
  t.equal(reloads(), 0, 'none before RELOAD_MS has passed');
  await clock.advance(1);
  await delivered();
  t.equal(reloads(), 1, 'one once it has');
  listener().reconnected();
  await delivered();
  t.equal(reloads(), 2, 'and one at once after a reconnection');
  await clock.advance(RELOAD_MS);
  await delivered();
  t.equal(reloads(), 3, 'the reloads keep their pace');

  stopFollowing();
  t.equal(clock.pending, 0, 'the stop leaves no timer');
  await clock.advance(RELOAD_MS);
  await delivered();
  t.equal(reloads(), 3, 'and brings no more reloads');
});

t.test("another process's hints are handed on once they pass the schema; others are dropped", async (t) => {
  const { system, users, got, bus, listener } = followed();
  t.teardown(() => stop(system));
  const clock = new ManualClock();
  t.teardown(await followHints(users, bus, quietLogger(), clock));
  listener().hint({ type: 'association', org: 'acme', username: 'ann' });
  listener().hint({ type: 'association', org: 'acme' });
  listener().hint('not a hint');
  await delivered();
  t.same(got, [{ type: 'hint', hint: { type: 'association', org: 'acme', username: 'ann' } }]);
});
