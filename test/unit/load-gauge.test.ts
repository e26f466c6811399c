// The load gauge over a real event loop: saturated after a period of work without a pause, not after one of waiting.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { LoadGauge } from '../../src/lib/load-gauge.js';

/** Keeps this thread busy for `ms`, yielding to the event loop only between slices of 5 ms. */
async function work(ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const slice = performance.now() + 5;
    while (performance.now() < slice);
    await new Promise((r) => setImmediate(r));
  }
}

t.test('a loop busy for several periods is saturated; one that then waits is not', async (t) => {
  const gauge = new LoadGauge({ periodMs: 50 });
  t.teardown(() => gauge.stop());
  await sleep(120);
  t.equal(gauge.saturated, false, 'an idle loop');
  await work(300);
  t.equal(gauge.saturated, true, 'after 300 ms of work');
  await sleep(200);
  t.equal(gauge.saturated, false, 'after 200 ms of waiting');
});

t.test('between the two thresholds the gauge keeps its state', async (t) => {
  // half-busy periods reach neither enter (above 0.95) nor leave (below 0.05).
  const gauge = new LoadGauge({ periodMs: 50, enter: 0.95, leave: 0.05 });
  t.teardown(() => gauge.stop());
  for (let i = 0; i < 6; i++) {
    await work(25);
    await sleep(25);
  }
  t.equal(gauge.saturated, false, 'half-busy periods do not enter');
  await work(300);
  t.equal(gauge.saturated, true, 'a busy stretch enters');
  for (let i = 0; i < 6; i++) {
    await work(25);
    await sleep(25);
  }
  t.equal(gauge.saturated, true, 'half-busy periods do not leave');
});
