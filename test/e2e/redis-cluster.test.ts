// Server processes on a Redis Cluster of three masters, found from a URL naming one of them: they set the cluster
// up, share its partitions and run a job on real push-jobs-client nodes, each partition's keys in one slot; and when
// the master of an organization's slot is failed over to its replica, by an operator or by its kill -9, they follow
// it, and writes and jobs go on.
import t from 'tap';
import { clusterOf, fleet, jobEnd, startCluster, startJob } from '../support/cluster.js';
import { until } from '../support/deadline.js';
import { onPort } from '../support/redis-probe.js';
import { startRedisCluster } from '../support/redis-cluster.js';
import type { ApiClient } from '../../src/auth/api-client.js';
import { collectionKey } from '../../src/store/layout.js';
import { partitionOf } from '../../src/store/partitions.js';

const NODES = 'org/default/nodes';

t.test('two processes on a three-master Redis Cluster run a job', async (t) => {
  const redis = await startRedisCluster(t);
  const c = await startCluster(t, 2, redis.url);
  const statuses = await until(
    'every partition to be served',
    async () => {
      const all = await Promise.all(c.servers.map(clusterOf));
      return all.reduce((n, s) => n + (s?.partitions ?? 0), 0) === 65 ? all : undefined;
    },
    30_000,
  );
  for (const s of statuses) t.equal(s?.redis_mode, 'cluster', 'the server found the Redis Cluster');
  const [first, second] = c.servers as [(typeof c.servers)[0], (typeof c.servers)[0]];
  const nodes = await fleet(t, c, first, ['rc1', 'rc2']);
  const id = await startJob(await c.admin(second), 'hello', ['rc1', 'rc2']);
  const job = await jobEnd(await c.admin(first), id, 30_000);
  t.equal(job.status, 'complete');
  t.same(job.nodes, { succeeded: ['rc1', 'rc2'] });
  for (const n of nodes) await n.stop();
});

t.test('the master of an organization’s slot failed over to its replica: writes and jobs go on', async (t) => {
  const redis = await startRedisCluster(t, 3, 1);
  const c = await startCluster(t, 2, redis.url);
  const served = async () => {
    const all = await Promise.all(c.servers.map(clusterOf));
    const partitions = all.reduce((n, s) => n + (s?.partitions ?? 0), 0);
    return partitions === 65 && all.every((s) => s?.members.length === 2) ? true : undefined;
  };
  await until('every partition to be served', served, 30_000);
  const [first, second] = c.servers as [(typeof c.servers)[0], (typeof c.servers)[0]];
  const nodes = await fleet(t, c, first, ['rf1', 'rf2']);
  const before = await jobEnd(
    await c.admin(first),
    await startJob(await c.admin(second), 'hello', ['rf1', 'rf2']),
    30_000,
  );
  t.equal(before.status, 'complete', 'a job runs before the failover');

  // The organization's documents, jobs and inbox share its partition's slot.
  const key = collectionKey('infra:', partitionOf('default'), NODES);
  const { from, to } = await redis.failover(key);
  t.not(to, from, 'the replica serves the slot now');
  const admins = [await c.admin(first), await c.admin(second)];
  for (const [i, admin] of admins.entries()) {
    const name = `after-${i}`;
    const created = await until(
      `${name} to be created`,
      async () => {
        const res = await admin.request('POST', '/organizations/default/nodes', { name });
        return res.status === 503 ? undefined : res.status;
      },
      30_000,
      250,
    );
    t.equal(created, 201, `a node is created through process ${i + 1} after the failover`);
    const other = admins[1 - i] as ApiClient;
    t.equal(
      (await other.request('GET', `/organizations/default/nodes/${name}`)).status,
      200,
      'and read through the other',
    );
  }
  const keys = (await onPort(to, (r) => r.hkeys(key))) ?? [];
  t.ok(keys.includes('after-0') && keys.includes('after-1'), 'the new master holds what was written after it');
  t.ok(await until('both processes to serve every partition', served, 30_000));
  const after = await jobEnd(
    await c.admin(second),
    await startJob(await c.admin(first), 'hello', ['rf1', 'rf2']),
    30_000,
  );
  t.equal(after.status, 'complete', 'a job started after the failover completes');
  t.same(after.nodes, { succeeded: ['rf1', 'rf2'] });
  for (const n of nodes) await n.stop();
});

t.test(
  'kill -9 of the master of an organization’s slot: its replica takes over, and writes and jobs go on',
  async (t) => {
    const redis = await startRedisCluster(t, 3, 1);
    const c = await startCluster(t, 2, redis.url);
    const served = async () => {
      const all = await Promise.all(c.servers.map(clusterOf));
      const partitions = all.reduce((n, s) => n + (s?.partitions ?? 0), 0);
      return partitions === 65 && all.every((s) => s?.members.length === 2) ? true : undefined;
    };
    await until('every partition to be served', served, 30_000);
    const [first, second] = c.servers as [(typeof c.servers)[0], (typeof c.servers)[0]];
    const nodes = await fleet(t, c, first, ['rk1', 'rk2']);
    const key = collectionKey('infra:', partitionOf('default'), NODES);
    const from = await redis.masterOf(key);
    await redis.kill(from);
    const to = await redis.promoted(key, from);
    t.not(to, from, 'the replica serves the slot');
    // What the killed master had not passed on is gone (Redis replicates in the background); from now on, writes
    // through either member land on the new master.
    const admins = [await c.admin(first), await c.admin(second)];
    for (const [i, admin] of admins.entries()) {
      const name = `after-kill-${i}`;
      const created = await until(
        `${name} to be created`,
        async () => {
          const res = await admin.request('POST', '/organizations/default/nodes', { name });
          return res.status === 503 ? undefined : res.status;
        },
        30_000,
        250,
      );
      t.equal(created, 201, `a node is created through process ${i + 1} after the kill`);
      const other = admins[1 - i] as ApiClient;
      t.equal(
        (await other.request('GET', `/organizations/default/nodes/${name}`)).status,
        200,
        'and read through the other',
      );
    }
    const keys = (await onPort(to, (r) => r.hkeys(key))) ?? [];
    t.ok(keys.includes('after-kill-0') && keys.includes('after-kill-1'), 'the new master holds them');
    t.ok(await until('both processes to serve every partition', served, 30_000));
    const job = await jobEnd(
      await c.admin(second),
      await startJob(await c.admin(first), 'hello', ['rk1', 'rk2']),
      30_000,
    );
    t.equal(job.status, 'complete', 'a job started after the kill completes');
    t.same(job.nodes, { succeeded: ['rk1', 'rk2'] });
    for (const n of nodes) await n.stop();
  },
);
