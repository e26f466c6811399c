// The reading loop's retries, on sockets made for the test: a failure that is not an interruption is read again
// after a wait that doubles up to a second, an interrupted receive at once, and failures in a row are reported at
// powers of two. The loop's waits are recorded, not waited; test/integration/read-loop.test.ts uses real sockets.
import t from 'tap';
import { readUntilClosed, worthReporting, type ReadableSocket } from '../../src/protocol/read-loop.js';

/** A wait that records how long the loop asked to pause, and lets it go on at once. */
function recordedWaits() {
  const waits: number[] = [];
  const wait = (ms: number) => {
    waits.push(ms);
    return Promise.resolve();
  };
  return { waits, wait };
}

t.test('a failure that is not an interruption is read again after a doubling wait, not in a busy loop', async (t) => {
  const FAILURES = 10;
  let attempts = 0;
  const failing: ReadableSocket & { closed: boolean } = {
    closed: false,
    receive: () => {
      attempts += 1;
      if (attempts > FAILURES) failing.closed = true;
      return Promise.reject(Object.assign(new Error('broken'), { code: 'EFSM' }));
    },
  };
  const seen: number[] = [];
  const { waits, wait } = recordedWaits();
  await readUntilClosed(
    failing,
    { take: () => undefined, receiveFailed: (_e, inARow) => seen.push(inARow), takeFailed: () => undefined },
    wait,
  );
  t.same(waits, [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000], 'waits of 10 ms doubling, up to a second');
  t.same(
    seen,
    Array.from({ length: FAILURES }, (_, i) => i + 1),
    'each failure is reported with its count',
  );
  t.equal(attempts, FAILURES + 1, 'the receive that failed once the socket was closed ends the loop');
});

t.test('an interrupted receive is read again at once', async (t) => {
  let attempts = 0;
  const interrupted: ReadableSocket & { closed: boolean } = {
    closed: false,
    receive: () => {
      attempts += 1;
      if (attempts <= 50) return Promise.reject(Object.assign(new Error('Interrupted system call'), { code: 'EINTR' }));
      return Promise.resolve([Buffer.from('id'), Buffer.from('after the signals')]);
    },
  };
  const taken: string[] = [];
  const { waits, wait } = recordedWaits();
  await readUntilClosed(
    interrupted,
    {
      take: (frames) => {
        taken.push(String(frames[1]));
        interrupted.closed = true;
        return undefined;
      },
      receiveFailed: () => undefined,
      takeFailed: () => undefined,
    },
    wait,
  );
  t.same(taken, ['after the signals'], 'the message after 50 interruptions is read');
  t.same(waits, Array<number>(50).fill(0), 'each interruption is followed by a turn of the event loop, not a timer');
});

t.test('failures in a row are logged at the first and then at each power of two', async (t) => {
  t.same(Array.from({ length: 17 }, (_, i) => i + 1).filter(worthReporting), [1, 2, 4, 8, 16]);
});
