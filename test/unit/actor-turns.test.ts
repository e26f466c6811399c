// Actors take their queued messages several to a turn of the event loop (actors/shared/turns.ts): a backlog of
// thousands is handled in a few turns, in order, a crash costs only its own message, and a slow actor still lets
// the rest of the process run between its turns. Turns are counted with setImmediate; nothing here waits on time.
import { dispatch, start, stop, type Ref } from 'nact';
import t from 'tap';
import { spawnSupervised } from '../../actors/shared/supervision.js';
import { timeTurnsOn, TURN_BUDGET_MS } from '../../actors/shared/turns.js';

const reporter = { crashed: () => undefined };

/** Turns of the event loop until `done()` holds (at most `limit`). */
async function turnsUntil(done: () => boolean, limit: number): Promise<number> {
  let turns = 0;
  while (!done() && turns < limit) {
    await new Promise((resolve) => setImmediate(resolve));
    turns += 1;
  }
  return turns;
}

t.test('a backlog of 5,000 messages is handled in a few turns, in order', async (t) => {
  const system = start();
  t.teardown(() => stop(system));
  const seen: number[] = [];
  const actor: Ref<number> = spawnSupervised<null, number>(
    system,
    {
      name: 'counter',
      initial: null,
      receive: (state, n) => {
        seen.push(n);
        return state;
      },
      onCrash: (state) => state,
    },
    reporter,
  );
  for (let i = 0; i < 5000; i++) dispatch(actor, i);
  const turns = await turnsUntil(() => seen.length === 5000, 5000);
  t.equal(seen.length, 5000, 'all handled');
  // One message a turn would take 5,000 turns; at most 1,000 a turn (TURN_MAX_MESSAGES) takes five.
  t.ok(turns < 100, `handled in ${turns} turns`);
  t.ok(turns >= 5, 'no more than 1,000 in one turn');
  t.same(
    seen,
    Array.from({ length: 5000 }, (_, i) => i),
    'in the order sent',
  );
});

t.test('a message that throws goes to the crash policy, and the next ones are handled', async (t) => {
  const system = start();
  t.teardown(() => stop(system));
  const seen: number[] = [];
  const crashed: number[] = [];
  const actor: Ref<number> = spawnSupervised<number, number>(
    system,
    {
      name: 'thrower',
      initial: 0,
      receive: (count, n) => {
        if (n === 50) throw new Error('a bug');
        seen.push(n);
        return count + 1;
      },
      onCrash: (count, n) => {
        crashed.push(n);
        return count;
      },
    },
    reporter,
  );
  for (let i = 0; i < 100; i++) dispatch(actor, i);
  await turnsUntil(() => seen.length === 99, 1000);
  t.same(crashed, [50]);
  t.same(
    seen,
    Array.from({ length: 100 }, (_, i) => i).filter((i) => i !== 50),
  );
});

t.test('a slow actor yields between turns: other work runs while its backlog is handled', async (t) => {
  const system = start();
  let clock = 0;
  const untime = timeTurnsOn({ now: () => clock });
  t.teardown(() => {
    untime();
    stop(system);
  });
  let handled = 0;
  const actor: Ref<number> = spawnSupervised<null, number>(
    system,
    {
      name: 'slow',
      initial: null,
      receive: (state) => {
        // Each message takes more than a turn's budget: each turn takes one.
        clock += TURN_BUDGET_MS + 1;
        handled += 1;
        return state;
      },
      onCrash: (state) => state,
    },
    reporter,
  );
  for (let i = 0; i < 20; i++) dispatch(actor, i);
  const turns = await turnsUntil(() => handled === 20, 1000);
  t.equal(handled, 20);
  t.ok(turns >= 19, `the loop turned ${turns} times while 20 slow messages were handled`);
});

t.test('an actor stopped in the middle of its backlog handles nothing more', async (t) => {
  const system = start();
  t.teardown(() => stop(system));
  let handled = 0;
  const actor: Ref<number> = spawnSupervised<null, number>(
    system,
    {
      name: 'stopping',
      initial: null,
      receive: (state, n, self) => {
        handled += 1;
        if (n === 10) stop(self);
        return state;
      },
      onCrash: (state) => state,
    },
    reporter,
  );
  for (let i = 0; i < 100; i++) dispatch(actor, i);
  await turnsUntil(() => false, 10);
  t.equal(handled, 11, 'the messages after the stop are not handled');
});
