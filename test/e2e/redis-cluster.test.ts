// Server processes on a Redis Cluster of three masters, found from a URL naming one of them: they set the cluster
// up, share its partitions and run a job on real push-jobs-client nodes, each partition's keys in one slot.
import t from 'tap';
import { clusterOf, fleet, jobEnd, startCluster, startJob } from '../support/cluster.js';
import { until } from '../support/deadline.js';
import { startRedisCluster } from '../support/redis-cluster.js';

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
