// How long a connection whose peer's host vanished stays open: idle_timeout, in the kernel's whole seconds.
import t from 'tap';
import { keepaliveOptions } from '../../src/protocol/keepalive.js';

const closesAfter = (o: ReturnType<typeof keepaliveOptions>) =>
  o.tcpKeepaliveIdle + o.tcpKeepaliveInterval * o.tcpKeepaliveCount;

t.test('the default idle_timeout of 60 s closes a vanished peer 60 s after it fell silent', async (t) => {
  const o = keepaliveOptions(60);
  t.same(o, { tcpKeepalive: 1, tcpKeepaliveIdle: 30, tcpKeepaliveInterval: 6, tcpKeepaliveCount: 5 });
  t.equal(closesAfter(o), 60);
});

t.test('longer timeouts close within them, never later', async (t) => {
  for (const idle of [7, 61, 300, 3599]) {
    const after = closesAfter(keepaliveOptions(idle));
    t.ok(after <= idle && after > idle - 6, `idle_timeout ${idle}: closed after ${after} s`);
  }
});

t.test('a timeout shorter than the kernel allows takes one second a step', async (t) => {
  for (const idle of [1, 2, 5]) {
    const o = keepaliveOptions(idle);
    t.ok(o.tcpKeepaliveIdle >= 1 && o.tcpKeepaliveInterval >= 1, `idle_timeout ${idle}: whole seconds`);
    t.ok(closesAfter(o) <= 6 + idle, `idle_timeout ${idle}: closed after ${closesAfter(o)} s`);
  }
});
