// Server processes on a Redis Cluster of three masters, found from a URL naming one of them: they set the cluster
// up, share its partitions and run a job on real push-jobs-client nodes, each partition's keys in one slot; and when
// the master of an organization's slot is failed over to its replica, by an operator or by its kill -9, they follow
// it, and writes and jobs go on.
import t from 'tap';
import {
  clusterOf,
  createThroughEach,
  everyPartitionServed,
  fleet,
  jobEnd,
  keepCreating,
  startCluster,
  startJob,
} from '../support/cluster.js';
import { until } from '../support/deadline.js';
import { onPort } from '../support/redis-probe.js';
import { startRedisCluster } from '../support/redis-cluster.js';
import { collectionKey, membersKey } from '../../src/store/layout.js';
import { partitionOf } from '../../src/store/partitions.js';

// A Redis Cluster of three masters and their replicas, and failovers of a slot by an operator and by kill -9: about
// two minutes alone.
t.setTimeout(300_000);

const NODES = 'org/default/nodes';

t.test('two processes on a three-master Redis Cluster run a job', async (t) => {
  const redis = await startRedisCluster(t);
  const c = await startCluster(t, 2, redis.url);
  const statuses = await until('every partition to be served', everyPartitionServed(c), 30_000);
  for (const s of statuses) t.equal(s?.redis_mode, 'cluster', 'the server found the Redis Cluster');
  const [first, second] = c.servers as [(typeof c.servers)[0], (typeof c.servers)[0]];
  const nodes = await fleet(t, c, first, ['rc1', 'rc2']);
  const id = await startJob(await c.admin(second), 'hello', ['rc1', 'rc2']);
  const job = await jobEnd(await c.admin(first), id, 30_000);
  t.equal(job.status, 'complete');
  t.same(job.nodes, { succeeded: ['rc1', 'rc2'] });
  for (const n of nodes) await n.stop();
});

for (const how of ['CLUSTER FAILOVER', 'kill -9 of the master'] as const)
  t.test(`${how} of an organization’s slot: its replica takes over, and writes and jobs go on`, async (t) => {
    const redis = await startRedisCluster(t, 3, 1);
    const c = await startCluster(t, 2, redis.url);
    const served = everyPartitionServed(c);
    await until('every partition to be served', served, 30_000);
    const [first, second] = c.servers as [(typeof c.servers)[0], (typeof c.servers)[0]];
    const names = how === 'CLUSTER FAILOVER' ? ['rf1', 'rf2'] : ['rk1', 'rk2'];
    const nodes = await fleet(t, c, first, names);
    const before = await jobEnd(await c.admin(first), await startJob(await c.admin(second), 'hello', names), 30_000);
    t.equal(before.status, 'complete', 'a job runs before the failover');

    // The organization's documents, jobs and inbox share its partition's slot.
    const key = collectionKey('infra:', partitionOf('default'), NODES);
    let to: number;
    if (how === 'CLUSTER FAILOVER') to = (await redis.failover(key)).to;
    else {
      // What the killed master had not passed on is gone: Redis Cluster replicates in the background.
      const from = await redis.masterOf(key);
      await redis.kill(from);
      to = await redis.promoted(key, from);
    }
    const created = await createThroughEach(t, c, 'after');
    const keys = (await onPort(to, (r) => r.hkeys(key))) ?? [];
    t.ok(
      created.every((name) => keys.includes(name)),
      'the new master holds what was written after it',
    );
    t.ok(await until('both processes to serve every partition', served, 30_000));
    const after = await jobEnd(await c.admin(second), await startJob(await c.admin(first), 'hello', names), 30_000);
    t.equal(after.status, 'complete', 'a job started after the failover completes');
    t.same(after.nodes, { succeeded: names });
    for (const n of nodes) await n.stop();
  });

t.test(
  'kill -9 of the master holding the members’ registrations stops no organization whose slot is elsewhere',
  async (t) => {
    const redis = await startRedisCluster(t, 3, 1);
    const c = await startCluster(t, 2, redis.url);
    await until('every partition to be served', everyPartitionServed(c), 30_000);
    const registrations = membersKey('infra:');
    const killed = await redis.masterOf(registrations);
    // An organization whose partition's slot another master serves.
    let org = '';
    for (let i = 0; org === ''; i++) {
      const name = `elsewhere-${i}`;
      if ((await redis.masterOf(collectionKey('infra:', partitionOf(name), `org/${name}/nodes`))) !== killed)
        org = name;
    }
    const pivotals = await Promise.all(c.servers.map((s) => c.pivotal(s)));
    const made = await (pivotals[0] as (typeof pivotals)[0]).request('POST', '/organizations', {
      name: org,
      full_name: org,
    });
    t.equal(made.status, 201, `organization ${org} created`);
    const writers = keepCreating(pivotals, 'during', org);
    await writers.more(20);
    await redis.kill(killed);
    const promoted = await redis.promoted(registrations, killed);
    // On past the leases' time to live: before, every lease lapsed with its holder's one registration, and every
    // organization answered 503 until the new master took the registrations.
    await writers.more(50);
    await writers.stop();
    t.not(promoted, killed, 'the replica took over the registrations');
    t.same(
      writers.refused,
      [],
      `no write was refused meanwhile (${writers.answered.length} answered, ${writers.refused.length} refused)`,
    );
  },
);

t.test('SIGSTOP of a member past its lease on a Redis Cluster: the others take its partitions', async (t) => {
  const redis = await startRedisCluster(t);
  const c = await startCluster(t, 3, redis.url);
  const statuses = await until('every partition to be served', everyPartitionServed(c), 30_000);
  const at = statuses.findIndex((s) => (s?.partitions ?? 0) > 0);
  const frozen = c.servers[at] as (typeof c.servers)[0];
  const its = statuses[at]?.held ?? [];
  const others = c.servers.filter((s) => s !== frozen);
  process.kill(frozen.pid, 'SIGSTOP');
  t.teardown(() => {
    try {
      process.kill(frozen.pid, 'SIGCONT');
    } catch {
      // gone already
    }
  });
  // Each partition's slot hears the other members beat while its holder is silent, and lets them take its lease.
  await until(
    'the frozen member’s partitions to be served by the others',
    async () => {
      const held = new Set((await Promise.all(others.map(clusterOf))).flatMap((s) => s?.held ?? []));
      return its.every((p) => held.has(p)) ? true : undefined;
    },
    20_000,
  );
  t.pass(`the ${its.length} partitions of the frozen member are served by the others`);
  const name = 'while-frozen';
  const admin = await c.admin(others[0] as (typeof c.servers)[0]);
  t.equal(
    (await admin.request('POST', '/organizations/default/nodes', { name })).status,
    201,
    'and an organization answers writes',
  );
});
