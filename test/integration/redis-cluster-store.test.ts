// The Redis store on a Redis Cluster of three masters: the same contract as on one Redis, each partition's keys in
// one slot (so each fenced script runs), and the cluster found from a URL naming any one master. The streams between
// owners and gateways work there too, where one blocking read cannot span the partitions' slots.
import { Cluster } from 'ioredis';
import t from 'tap';
import { holdEveryPartition } from '../../src/cluster/leases.js';
import type { Partition } from '../../src/store/partitions.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { until } from '../support/deadline.js';
import { answer, linkOn, type Heard } from '../support/node-link.js';
import { startRedisCluster } from '../support/redis-cluster.js';
import { uniquePrefix } from '../support/redis.js';
import { storeSuite } from './store.suite.js';

const cluster = await startRedisCluster(t);

storeSuite(t, async () => {
  const prefix = uniquePrefix();
  const store = await RedisStore.connect(cluster.url, prefix);
  const leases = await holdEveryPartition(store);
  return {
    store,
    reopen: async () => {
      const again = await RedisStore.connect(cluster.url, prefix);
      again.fenceWith(leases);
      return again;
    },
    // A store of its own: the test may have closed the one it wrote through.
    cleanup: async () => {
      const admin = await RedisStore.connect(cluster.url, prefix);
      admin.fenceWith(leases);
      for (const collection of ['org', 'orgs', 'users', 'global']) await admin.drop(collection);
      await admin.close();
      await leases.stop(true);
      await store.close();
    },
  };
});

t.test('a URL naming any master opens the whole cluster', async (t) => {
  for (const port of cluster.ports) {
    const store = await RedisStore.connect(`redis://127.0.0.1:${port}`, uniquePrefix());
    t.equal(store.mode, 'cluster', `through the master on ${port}`);
    await store.close();
  }
});

t.test('redis_min_replicas above 0 is refused on a cluster, with the setting named', async (t) => {
  await t.rejects(RedisStore.connect(cluster.url, uniquePrefix(), undefined, { minReplicas: 1, timeoutMs: 100 }), {
    message: 'redis_min_replicas is not supported on a Redis Cluster: set it to 0',
  });
});

t.test('organizations spread over the masters, each written by one script in its slot', async (t) => {
  const prefix = uniquePrefix();
  const store = await RedisStore.connect(cluster.url, prefix);
  const leases = await holdEveryPartition(store);
  t.teardown(async () => {
    await store.drop('org');
    await store.drop('orgs');
    await leases.stop(true);
    await store.close();
  });
  const names = Array.from({ length: 40 }, (_, i) => `org-${i}`);
  for (const name of names) {
    await store.apply([
      { collection: 'orgs', id: name, doc: { name } },
      { collection: `org/${name}/nodes`, id: 'web', doc: { name: 'web' } },
      { collection: `org/${name}/jobs`, id: 'j1', fields: [['web', { status: 'running' }]] },
    ]);
  }
  t.same([...(await store.load('orgs')).keys()].sort(), [...names].sort());
  for (const name of names) t.same(await store.get(`org/${name}/nodes`, 'web'), { name: 'web' });
  const admin = new Cluster([{ host: '127.0.0.1', port: cluster.ports[0] ?? 0 }]);
  t.teardown(() => admin.quit());
  await new Promise((resolve) => admin.once('ready', resolve));
  const masters = new Set<number>();
  for (const node of admin.nodes('master')) {
    const keys = await node.keys(`${prefix}*`);
    if (keys.length > 0) masters.add(node.options.port ?? 0);
  }
  t.ok(masters.size > 1, `the keys live on ${masters.size} masters`);
});

t.test(
  'owners read the inboxes of the partitions they serve, each in its own slot, and no more once let go',
  async (t) => {
    const prefix = uniquePrefix();
    const store = await RedisStore.connect(cluster.url, prefix);
    t.teardown(() => store.close());
    const linkOf = (me: string) => linkOn(t, store.redis, prefix, me);
    const heardAll = (heard: Heard, count: number) =>
      until(`${count} entries`, async () => (heard.inbox.length >= count ? true : undefined), 10_000);
    const owner = linkOf('owner');
    const gateway = linkOf('gw');
    const first: Partition = 1;
    const second: Partition = 7; // {p1} and {p7} hash to slots of different masters
    await owner.link.serve(first);
    gateway.link.event(first, answer('n1'));
    await heardAll(owner.heard, 1);
    await owner.link.serve(second);
    gateway.link.event(second, answer('n2'));
    gateway.link.event(first, answer('n3'));
    await heardAll(owner.heard, 3);
    t.same(owner.heard.inbox.flatMap((e) => e.events.map((ev) => (ev.t === 'answer' ? ev.node : ''))).sort(), [
      'n1',
      'n2',
      'n3',
    ]);

    owner.link.unserve(second);
    const next = linkOf('next');
    await next.link.serve(second);
    gateway.link.event(second, answer('n4'));
    await heardAll(next.heard, 1);
    t.same(next.heard.inbox[0]?.events, [answer('n4')], 'the next owner reads what came after');
    t.equal(owner.heard.inbox.length, 3, 'the owner that let the partition go read nothing more of it');
  },
);
