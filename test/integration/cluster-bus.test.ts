// The hint bus on a real Redis: what one process publishes reaches the others on the same key prefix and not
// itself, nor any process on another prefix; a message that is no hint is dropped; and a lost subscription is
// made again and said so, for the listener to catch up from the store.
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { ClusterBus } from '../../src/cluster/bus.js';
import { busChannel } from '../../src/store/layout.js';
import { until } from '../support/deadline.js';
import { quietLogger } from '../support/logs.js';
import { testRedisUrl, uniquePrefix } from '../support/redis.js';

const WAIT_MS = 10_000;

interface Heard {
  hints: unknown[];
  reconnects: number;
}

async function busOn(t: Test, url: string, prefix: string): Promise<{ bus: ClusterBus; heard: Heard }> {
  const redis = new Redis(url);
  const bus = new ClusterBus(redis, prefix, quietLogger());
  const heard: Heard = { hints: [], reconnects: 0 };
  await bus.listen({ hint: (raw) => heard.hints.push(raw), reconnected: () => heard.reconnects++ });
  t.teardown(async () => {
    await bus.close();
    await redis.quit();
  });
  return { bus, heard };
}

t.test('a hint reaches the other processes on the prefix, and only them', async (t) => {
  const url = await testRedisUrl();
  const prefix = uniquePrefix();
  const a = await busOn(t, url, prefix);
  const b = await busOn(t, url, prefix);
  const elsewhere = await busOn(t, url, uniquePrefix());

  a.bus.publish({ type: 'users', names: ['alice'] });
  await until('the hint to reach the other process', () => (b.heard.hints.length > 0 ? true : undefined), WAIT_MS);
  t.same(b.heard.hints, [{ type: 'users', names: ['alice'] }]);

  // Published after the first, so heard after it: once b hears this, a and elsewhere would have heard the first.
  const raw = new Redis(url);
  t.teardown(() => raw.quit());
  await raw.publish(busChannel(prefix), 'not json');
  await raw.publish(busChannel(prefix), JSON.stringify({ hint: { type: 'users', names: [] } }));
  b.bus.publish({ type: 'org_info', org: 'acme' });
  await until('the second hint', () => (a.heard.hints.length > 0 ? true : undefined), WAIT_MS);
  t.same(a.heard.hints, [{ type: 'org_info', org: 'acme' }], 'a process hears the others, never itself');
  t.same(b.heard.hints, [{ type: 'users', names: ['alice'] }], 'messages that are no hint are dropped');
  t.same(elsewhere.heard.hints, [], 'nothing reaches another prefix');
});

t.test('a lost subscription is made again and the listener told, so it reloads', async (t) => {
  const url = await testRedisUrl();
  const prefix = uniquePrefix();
  const a = await busOn(t, url, prefix);
  const b = await busOn(t, url, prefix);

  const admin = new Redis(url);
  t.teardown(() => admin.quit());
  const clients = String(await admin.client('LIST'));
  const line = clients.split('\n').find((l) => l.includes(`name=infra-bus:${b.bus.id}`));
  const id = line === undefined ? undefined : /\bid=(\d+)/.exec(line)?.[1];
  if (id === undefined) throw new Error('the subscriber is not among the clients');
  await admin.client('KILL', 'ID', id);

  await until('the listener to hear of the reconnect', () => (b.heard.reconnects > 0 ? true : undefined), WAIT_MS);
  t.equal(b.heard.reconnects, 1);
  // Hints flow again once subscribed anew: published until b hears one, since a hint sent before is lost.
  await until(
    'a hint after the reconnect',
    () => {
      if (b.heard.hints.length > 0) return true;
      a.bus.publish({ type: 'users', names: ['back'] });
      return undefined;
    },
    WAIT_MS,
    100,
  );
  t.same(b.heard.hints[0], { type: 'users', names: ['back'] });
  t.equal(a.heard.reconnects, 0, 'the other process was not disturbed');
});
