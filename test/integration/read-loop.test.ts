// The reading loop of every push-jobs channel (server, client, load tester): a receive that fails while the
// socket is open is read again instead of stopping the channel, a message that cannot be handled loses only
// itself, and closing the socket ends the loop.
import t from 'tap';
import { readUntilClosed, worthReporting, type ReadableSocket } from '../../src/protocol/read-loop.js';
import { routerDealerPair } from '../support/zmq-pair.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function codeOf(e: unknown): unknown {
  return e instanceof Error && 'code' in e ? e.code : undefined;
}

t.test('receives that fail on an open socket are read again, and the next message arrives', async (t) => {
  const { router, dealer } = await routerDealerPair(t);
  // A receive timeout makes each receive on the real socket fail with EAGAIN while it stays open.
  router.receiveTimeout = 20;
  const failures: Array<{ code: unknown; inARow: number }> = [];
  const taken: string[] = [];
  const loop = readUntilClosed(router, {
    take: (frames) => {
      taken.push(String(frames[1]));
      return undefined;
    },
    receiveFailed: (e, inARow) => failures.push({ code: codeOf(e), inARow }),
    takeFailed: (e) => t.fail(`nothing should fail to be handled: ${String(e)}`),
  });
  await sleep(200);
  t.ok(failures.length >= 3, `the socket failed ${failures.length} receives`);
  t.ok(
    failures.every((f) => f.code === 'EAGAIN'),
    'each failure is the socket timing out',
  );
  t.same(
    failures.slice(0, 3).map((f) => f.inARow),
    [1, 2, 3],
    'failures are counted in a row',
  );
  router.receiveTimeout = -1;
  await dealer.send('still heard');
  const deadline = Date.now() + 2000;
  while (taken.length === 0 && Date.now() < deadline) await sleep(10);
  t.same(taken, ['still heard'], 'the message sent after the failures is read');
  router.close();
  await loop;
  t.pass('closing the socket ends the loop');
});

t.test('a message that cannot be handled loses only itself', async (t) => {
  const { router, dealer } = await routerDealerPair(t);
  const taken: string[] = [];
  const broken: string[] = [];
  const loop = readUntilClosed(router, {
    take: (frames) => {
      const text = String(frames[1]);
      if (text === 'bad') throw new Error('cannot handle this one');
      if (text === 'bad later') return Promise.reject(new Error('failed while waited for'));
      taken.push(text);
      return undefined;
    },
    receiveFailed: (e) => t.fail(`no receive should fail: ${String(e)}`),
    takeFailed: (e) => broken.push(e instanceof Error ? e.message : String(e)),
  });
  for (const m of ['first', 'bad', 'second', 'bad later', 'third']) await dealer.send(m);
  const deadline = Date.now() + 2000;
  while (taken.length < 3 && Date.now() < deadline) await sleep(10);
  t.same(taken, ['first', 'second', 'third'], 'every other message is handled, in order');
  t.same(broken, ['cannot handle this one', 'failed while waited for'], 'both failures are reported');
  router.close();
  await loop;
});

t.test('a failure that is not an interruption is retried after a growing wait, not in a busy loop', async (t) => {
  let attempts = 0;
  const failing: ReadableSocket & { closed: boolean } = {
    closed: false,
    receive: () => {
      attempts += 1;
      return Promise.reject(Object.assign(new Error('broken'), { code: 'EFSM' }));
    },
  };
  const seen: number[] = [];
  const loop = readUntilClosed(failing, {
    take: () => undefined,
    receiveFailed: (_e, inARow) => seen.push(inARow),
    takeFailed: () => undefined,
  });
  await sleep(300);
  failing.closed = true;
  await loop;
  // Waits of 10, 20, 40, 80 and 160 ms: five or six attempts in 300 ms.
  t.ok(attempts >= 3 && attempts <= 7, `${attempts} attempts in 300 ms`);
  t.same(
    seen,
    Array.from({ length: attempts }, (_, i) => i + 1),
    'each failure is reported with its count',
  );
});

t.test('an interrupted receive is read again at once', async (t) => {
  let attempts = 0;
  const interrupted: ReadableSocket = {
    closed: false,
    receive: () => {
      attempts += 1;
      if (attempts <= 50) return Promise.reject(Object.assign(new Error('Interrupted system call'), { code: 'EINTR' }));
      return Promise.resolve([Buffer.from('id'), Buffer.from('after the signals')]);
    },
  };
  const started = Date.now();
  const taken: string[] = [];
  await new Promise<void>((resolve) => {
    void readUntilClosed(interrupted, {
      take: (frames) => {
        taken.push(String(frames[1]));
        (interrupted as { closed: boolean }).closed = true;
        resolve();
        return undefined;
      },
      receiveFailed: () => undefined,
      takeFailed: () => undefined,
    });
  });
  t.same(taken, ['after the signals'], 'the message after 50 interruptions is read');
  t.ok(Date.now() - started < 1000, 'without waiting between interruptions');
});

t.test('failures in a row are logged at the first and then at each power of two', async (t) => {
  t.same(Array.from({ length: 17 }, (_, i) => i + 1).filter(worthReporting), [1, 2, 4, 8, 16]);
});
