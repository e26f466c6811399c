// The reading loop of every push-jobs channel (server, client, load tester) on real ZeroMQ sockets: a receive that
// fails while the socket is open is read again instead of stopping the channel, a message that cannot be handled
// loses only itself, and closing the socket ends the loop. Its waits between failures: test/unit/read-loop.test.ts.
import t from 'tap';
import { readUntilClosed } from '../../src/protocol/read-loop.js';
import { until } from '../support/deadline.js';
import { routerDealerPair } from '../support/zmq-pair.js';

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
  await until('three receives to fail', () => (failures.length >= 3 ? true : undefined), 10_000);
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
  await until('the message to be read', () => (taken.length > 0 ? true : undefined), 10_000);
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
  await until('the three good messages to be read', () => (taken.length >= 3 ? true : undefined), 10_000);
  t.same(taken, ['first', 'second', 'third'], 'every other message is handled, in order');
  t.same(broken, ['cannot handle this one', 'failed while waited for'], 'both failures are reported');
  router.close();
  await loop;
});
