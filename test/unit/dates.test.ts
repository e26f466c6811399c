// Wire time formats: HTTP-dates kept per second must read exactly as the date formatted afresh, whatever order
// the times come in (a job shows its nodes' times in name order, not time order).
import t from 'tap';
import { httpDate, isoSeconds } from '../../src/lib/dates.js';

t.test('httpDate reads as toUTCString for times in any order, past the seconds it keeps', async (t) => {
  const start = Date.UTC(2026, 10, 21, 23, 59, 0);
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const wrong: string[] = [];
  // 2,000 seconds: more than are kept, so the kept texts are dropped and made again on the way.
  for (let i = 0; i < 20_000; i++) {
    const ms = start + Math.floor(random() * 2_000_000);
    const expected = new Date(ms).toUTCString();
    if (httpDate(ms) !== expected) wrong.push(`${ms}: ${httpDate(ms)} instead of ${expected}`);
  }
  t.same(wrong.slice(0, 5), [], 'every time reads as its own date');
  t.equal(httpDate(start + 999), 'Sat, 21 Nov 2026 23:59:00 GMT', 'a fraction of a second is left out');
});

t.test('isoSeconds drops the fraction', async (t) => {
  t.equal(isoSeconds(Date.UTC(2026, 10, 21, 10, 35, 19, 456)), '2026-11-21T10:35:19Z');
});
