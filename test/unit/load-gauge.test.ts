// The load gauge's decision, period by period: saturated after a period busier than `enter`, unsaturated again
// after one quieter than `leave`, and between the two it keeps its state. The periods run on a manual clock and
// each says its own utilization; test/integration/load-gauge.test.ts measures a real event loop.
import t from 'tap';
import { LoadGauge, type LoadGaugeOptions } from '../../src/lib/load-gauge.js';
import { ManualClock } from '../support/manual-clock.js';

const PERIOD_MS = 50;

/** A gauge whose periods have the utilizations the test pushes onto `load`, one taken per period. */
function gauge(o: LoadGaugeOptions = {}) {
  const clock = new ManualClock();
  const load: number[] = [];
  const g = new LoadGauge({
    periodMs: PERIOD_MS,
    timers: clock,
    utilization: () => load.shift() ?? 0,
    ...o,
  });
  /** Runs one period of each utilization given; returns the gauge's state after each. */
  const periods = async (...utilizations: number[]): Promise<boolean[]> => {
    const states: boolean[] = [];
    for (const u of utilizations) {
      load.push(u);
      await clock.advance(PERIOD_MS);
      states.push(g.saturated);
    }
    return states;
  };
  return { g, clock, periods };
}

t.test('a period of work without a pause saturates the loop; a period of waiting does not', async (t) => {
  const { g, periods } = gauge();
  t.teardown(() => g.stop());
  t.equal(g.saturated, false, 'a new gauge is not saturated');
  t.same(await periods(0.05, 0.05), [false, false], 'an idle loop');
  t.same(await periods(0.99), [true], 'saturated after one busy period');
  t.same(await periods(0.99, 0.99), [true, true], 'and stays so while the work goes on');
  t.same(await periods(0.1), [false], 'no longer after a period of waiting');
});

t.test('the state changes only at the end of a period', async (t) => {
  const { g, clock, periods } = gauge();
  t.teardown(() => g.stop());
  await periods(0.99);
  t.equal(g.saturated, true);
  await clock.advance(PERIOD_MS - 1);
  t.equal(g.saturated, true, 'the next period has not ended yet');
  t.same(await periods(0), [false], 'the quiet period that ends now counts');
});

t.test('between the two thresholds the gauge keeps its state', async (t) => {
  const { g, periods } = gauge({ enter: 0.95, leave: 0.05 });
  t.teardown(() => g.stop());
  t.same(await periods(0.5, 0.94, 0.5), [false, false, false], 'half-busy periods do not enter');
  t.same(await periods(0.96), [true], 'a busy one enters');
  t.same(await periods(0.5, 0.06, 0.5), [true, true, true], 'half-busy periods do not leave');
  t.same(await periods(0.04), [false], 'a quiet one leaves');
});

t.test('the default thresholds: saturated above 0.9, and stays so while above 0.7', async (t) => {
  const { g, periods } = gauge();
  t.teardown(() => g.stop());
  t.same(await periods(0.9, 0.91, 0.71, 0.7), [false, true, true, false]);
});

t.test('a stopped gauge reads no more periods', async (t) => {
  const { g, clock } = gauge();
  g.stop();
  t.equal(clock.pending, 0, 'its timer is gone');
});
