// The load gauge over this thread's real event loop: kept busy, the loop is reported saturated; left to wait, it
// is not. Waits are for the gauge to say so, within generous deadlines; the thresholds and the hysteresis are
// checked period by period in test/unit/load-gauge.test.ts.
import t from 'tap';
import { LoadGauge } from '../../src/lib/load-gauge.js';
import { until } from '../support/deadline.js';

/**
 * Keeps this thread busy in slices of 50 ms, letting the event loop turn between them, until `done()`. The slices
 * are long beside the turns between them, which other processes on a busy machine may stretch to several
 * milliseconds: with slices of 5 ms such turns kept the loop's utilisation under the gauge's 90%.
 */
async function busyUntil(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  await until(
    what,
    () => {
      const slice = performance.now() + 50;
      while (performance.now() < slice);
      return done() ? true : undefined;
    },
    timeoutMs,
    0,
  );
}

t.test('a loop kept busy is saturated; once it waits again it is not', async (t) => {
  const gauge = new LoadGauge({ periodMs: 50 });
  t.teardown(() => gauge.stop());
  t.equal(gauge.saturated, false, 'a new gauge');
  await busyUntil('the busy loop to be reported saturated', () => gauge.saturated, 10_000);
  t.equal(gauge.saturated, true, 'saturated while it works without a pause');
  await until('the waiting loop to be reported unsaturated', () => (gauge.saturated ? undefined : true), 10_000);
  t.equal(gauge.saturated, false, 'not saturated once it waits');
});
