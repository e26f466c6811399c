// The transport's outbox over a real ROUTER and DEALER: messages leave in order, and a fan-out (a long queue)
// can be waited for, without waiting for what is queued after it.
import t from 'tap';
import { Outbox } from '../../src/transport/outbox.js';
import { routerDealerPair } from '../support/zmq-pair.js';

t.test('a fan-out is waited for up to what was queued, and every message arrives in order', async (t) => {
  const { router, dealer } = await routerDealerPair(t);
  await dealer.send('hello');
  const [identity] = await router.receive();
  const errors: unknown[] = [];
  const out = new Outbox(router, (e) => errors.push(e));
  const received: string[] = [];
  const all = (async () => {
    for await (const [frame] of dealer) {
      received.push(String(frame));
      if (received.length === 310) return;
    }
  })();

  for (let i = 0; i < 10; i++) out.push([identity as Buffer, `m${i}`]);
  t.equal(out.fanOut(), undefined, 'ten messages are no fan-out');
  for (let i = 10; i < 210; i++) out.push([identity as Buffer, `m${i}`]);
  const fanOut = out.fanOut();
  t.ok(fanOut !== undefined && fanOut.size > 64 && fanOut.size <= 210, `a fan-out of ${fanOut?.size} messages`);
  for (let i = 210; i < 310; i++) out.push([identity as Buffer, `m${i}`]);
  await fanOut?.written;
  await all;
  t.same(
    received,
    Array.from({ length: 310 }, (_, i) => `m${i}`),
    'all 310 arrived, in the order pushed',
  );
  t.same(errors, [], 'no send failed');
  t.equal(out.fanOut(), undefined, 'nothing waits once all is written');
});
