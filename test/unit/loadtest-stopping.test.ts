// How a load test stops, on a manual clock: the run waits on its stop signal, looked at every 100 ms, and a run
// still going a minute past --timeout is ended by force, its workers killed and its servers stopped.
import t from 'tap';
import type { Fleet } from '../../src/loadtest/fleet.js';
import type { SpawnedServer } from '../../src/loadtest/local-server.js';
import type { StopSignal } from '../../src/loadtest/scenario.js';
import { until, watchdog, type Held } from '../../src/loadtest/stopping.js';
import { ManualClock } from '../support/manual-clock.js';

const TIMEOUT_S = 30;
const GRACE_MS = 60_000;

function heldRun() {
  const clock = new ManualClock();
  const events: string[] = [];
  const stderr = { write: (s: string) => events.push(`stderr: ${s.trim()}`) > 0 };
  const fleet = { kill: () => void events.push(`fleet killed at ${clock.now()}`) };
  const server = { stop: async () => void events.push(`server stopped at ${clock.now()}`) };
  const held: Held = { servers: [server as unknown as SpawnedServer], fleet: fleet as unknown as Fleet };
  return { clock, events, stderr: stderr as unknown as NodeJS.WritableStream, held };
}

t.test('a run still going a minute past --timeout is stopped by force', async (t) => {
  const { clock, events, stderr, held } = heldRun();
  watchdog(TIMEOUT_S, stderr, held, clock);
  await clock.advance(TIMEOUT_S * 1000 + GRACE_MS - 1);
  t.same(events, [], 'not a moment before');
  await clock.advance(1);
  t.same(events, [
    'stderr: infra-loadtest: still running 60 s past --timeout: stopping by force',
    'fleet killed at 90000',
    'server stopped at 90000',
  ]);
  t.equal(clock.pending, 1, 'the process exit, a moment later, is all that is left');
});

t.test('a run that ends cancels its watchdog', async (t) => {
  const { clock, events, stderr, held } = heldRun();
  const cancel = watchdog(TIMEOUT_S, stderr, held, clock);
  await clock.advance(TIMEOUT_S * 1000);
  cancel();
  t.equal(clock.pending, 0);
  await clock.advance(2 * GRACE_MS);
  t.same(events, []);
});

t.test('until resolves within 100 ms of the stop signal being over', async (t) => {
  const clock = new ManualClock();
  const stop = { over: false };
  let doneAt: number | undefined;
  void until(stop as StopSignal, clock).then(() => (doneAt = clock.now()));
  await clock.advance(1000);
  t.equal(doneAt, undefined, 'still waiting while the run goes on');
  await clock.advance(30);
  stop.over = true;
  await clock.advance(100);
  t.equal(doneAt, 1100, 'at the next look');
  t.equal(clock.pending, 0);
});
