// The tester's clock and timers. Its times are milliseconds since the epoch that never step back (the process's
// start plus a monotonic count), so that what it records lines up with the server's times; its timers read that
// clock, and a unit test gives a part a ManualClock instead.
import { realTimers, type Timers } from '../lib/timers.js';

export const now = (): number => performance.timeOrigin + performance.now();

/** Node's timers, on the tester's clock. */
export const testerTimers: Timers = { ...realTimers, now };
