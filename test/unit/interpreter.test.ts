// The interpreter of the pure machines: a step's effects run in order, given the state the step led to and the
// cause the event was made from; a throw in the step or in an effect leaves the machine where it was; a reset moves
// it without running anything.
import t from 'tap';
import { Interpreter, type Step } from '../../actors/shared/interpreter.js';

interface Counter {
  n: number;
}
type Event = { type: 'add'; by: number } | { type: 'noop' } | { type: 'explode' };
type Effect = { type: 'said'; what: string } | { type: 'fail' };

/** A counter machine that returns a new state each step (never steps in place). */
const step: Step<Counter, Event, Effect> = (state, event) => {
  if (event.type === 'explode') throw new Error('step failed');
  if (event.type === 'noop') return { state, effects: [] };
  const next = { n: state.n + event.by };
  const effects: Effect[] = [
    { type: 'said', what: `first ${next.n}` },
    { type: 'said', what: `second ${next.n}` },
  ];
  if (event.by < 0) effects.push({ type: 'fail' });
  return { state: next, effects };
};

function fixture(start = 0) {
  const ran: Array<{ state: Counter; effect: Effect; cause: string | undefined }> = [];
  let runs = 0;
  const machine = new Interpreter<Counter, Event, Effect, string>(step, { n: start }, (state, effects, cause) => {
    runs++;
    for (const effect of effects) {
      if (effect.type === 'fail') throw new Error('effect failed');
      ran.push({ state, effect, cause });
    }
  });
  return { machine, ran, runs: () => runs };
}

t.test('the effects of a step run in order, with the state the step led to and the cause passed on', async (t) => {
  const { machine, ran } = fixture(1);
  const effects = machine.send({ type: 'add', by: 2 }, 'answer-7');
  t.same(
    ran.map((r) => r.effect),
    [
      { type: 'said', what: 'first 3' },
      { type: 'said', what: 'second 3' },
    ],
    'both effects ran, first to last',
  );
  t.same(
    ran.map((r) => r.state.n),
    [3, 3],
    'each given the state the step led to',
  );
  t.same(
    ran.map((r) => r.cause),
    ['answer-7', 'answer-7'],
    'and the cause of the event',
  );
  t.same(effects, [
    { type: 'said', what: 'first 3' },
    { type: 'said', what: 'second 3' },
  ]);
  t.equal(machine.state.n, 3, 'the machine is in the new state');
});

t.test('an event sent without a cause runs its effects with an undefined cause', async (t) => {
  const { machine, ran } = fixture();
  machine.send({ type: 'add', by: 1 });
  t.equal(ran.length, 2);
  t.equal(ran[0]?.cause, undefined);
});

t.test('a step with no effects moves the state and runs nothing', async (t) => {
  const { machine, runs } = fixture(5);
  t.same(machine.send({ type: 'noop' }, 'c'), []);
  t.equal(runs(), 0, 'the runner was not called');
  t.equal(machine.state.n, 5);
});

t.test('a throw in the step leaves the state as it was before the event', async (t) => {
  const { machine, ran } = fixture(4);
  const before = machine.state;
  t.throws(() => machine.send({ type: 'explode' }), /step failed/);
  t.equal(machine.state, before, 'the same state object');
  t.equal(machine.state.n, 4);
  t.equal(ran.length, 0, 'no effect ran');
});

t.test('a throw in an effect leaves the state as it was before the event', async (t) => {
  const { machine, ran } = fixture(10);
  t.throws(() => machine.send({ type: 'add', by: -1 }), /effect failed/);
  t.equal(machine.state.n, 10, 'not the 9 the step led to');
  t.equal(ran.length, 2, 'the effects before the failing one ran');
  machine.send({ type: 'add', by: 1 });
  t.equal(machine.state.n, 11, 'the next event steps from the state before the failed one');
});

t.test('an event sent while effects run is queued, and stepped after them from the state they led to', async (t) => {
  const seen: Array<{ n: number; effect: string }> = [];
  const machine: Interpreter<Counter, Event, Effect> = new Interpreter(step, { n: 0 }, (state, effects) => {
    for (const effect of effects) {
      if (effect.type !== 'said') continue;
      seen.push({ n: state.n, effect: effect.what });
      // Each first effect of an `add` above 10 reports a fact back at once, twice (as a write told to its node).
      if (effect.what.startsWith('first') && state.n > 10 && state.n < 100) {
        t.same(machine.send({ type: 'add', by: 100 }), [], 'a queued event returns no effects yet');
        machine.send({ type: 'add', by: 1000 });
        t.equal(machine.state.n, state.n - 11, 'nothing stepped yet: the machine is where the running event found it');
      }
    }
  });
  machine.send({ type: 'add', by: 11 });
  t.same(
    seen.map((s) => s.effect),
    ['first 11', 'second 11', 'first 111', 'second 111', 'first 1111', 'second 1111'],
    "the running event's effects end first; the queued events follow in the order sent",
  );
  t.equal(machine.state.n, 1111, 'each queued event stepped from the state before it: none overwritten');
  machine.send({ type: 'add', by: 1 });
  t.equal(machine.state.n, 1112, 'the queue is empty again');
});

t.test('a throw in a queued event drops the events queued behind it, and the next event runs as usual', async (t) => {
  let sent = false;
  const machine: Interpreter<Counter, Event, Effect> = new Interpreter(step, { n: 0 }, (_state, effects) => {
    if (sent || effects[0]?.type !== 'said') return;
    sent = true;
    machine.send({ type: 'explode' });
    machine.send({ type: 'add', by: 100 });
  });
  t.throws(() => machine.send({ type: 'add', by: 1 }), /step failed/);
  t.equal(machine.state.n, 1, 'the event whose effects ran stands; the failed one changed nothing');
  machine.send({ type: 'add', by: 2 });
  t.equal(machine.state.n, 3, 'the event queued behind the failure was dropped, and the machine goes on');
});

t.test('reset replaces the state without running any effect', async (t) => {
  const { machine, runs } = fixture(1);
  machine.reset({ n: 42 });
  t.equal(machine.state.n, 42);
  t.equal(runs(), 0, 'nothing ran');
  machine.send({ type: 'add', by: 1 });
  t.equal(machine.state.n, 43, 'the next step goes on from the given state');
});
