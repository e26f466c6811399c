// Server processes on a Redis found through Sentinel (`redis+sentinel://`): they form one cluster on its master and
// run a job on real push-jobs-client nodes; the master is failed over to a replica, as an operator does, and the
// same processes follow the sentinel to the new master, where what they write from then on lands and the next job
// completes.
import t from 'tap';
import { clusterOf, fleet, jobEnd, startCluster, startJob } from '../support/cluster.js';
import { until } from '../support/deadline.js';
import { getJob } from '../support/push-api.js';
import { onPort } from '../support/redis-probe.js';
import { startRedisSentinel } from '../support/redis-sentinel.js';
import type { ApiClient } from '../../src/auth/api-client.js';
import { collectionKey } from '../../src/store/layout.js';
import { partitionOfDoc } from '../../src/store/partitions.js';

const NODES = 'org/default/nodes';

/** Every partition and the global one, served once all members hold their share. */
const ALL_PARTITIONS = 65;

t.test(
  'two processes through Sentinel run a job, follow a failover of the master and write on the new one',
  async (t) => {
    const redis = await startRedisSentinel(t);
    const c = await startCluster(t, 2, redis.url);
    const served = async () => {
      const all = await Promise.all(c.servers.map(clusterOf));
      const partitions = all.reduce((n, s) => n + (s?.partitions ?? 0), 0);
      return partitions === ALL_PARTITIONS && all.every((s) => s?.members.length === 2) ? all : undefined;
    };
    const statuses = await until('every partition to be served', served, 30_000);
    for (const s of statuses) t.equal(s?.redis_mode, 'sentinel', 'the server reached Redis through the sentinel');
    const [first, second] = c.servers as [(typeof c.servers)[0], (typeof c.servers)[0]];
    const nodes = await fleet(t, c, first, ['sn1', 'sn2']);

    const before = await startJob(await c.admin(second), 'hello', ['sn1', 'sn2']);
    const ended = await jobEnd(await c.admin(first), before, 30_000);
    t.equal(ended.status, 'complete', 'a job runs on the first master');
    const oldMaster = await redis.master();

    const { from, to } = await redis.failover();
    await redis.following(from);
    // Writes go on through both processes, to the new master: each answered 201 is read back through the other.
    const admins = [await c.admin(first), await c.admin(second)];
    for (const [i, admin] of admins.entries()) {
      const name = `after-${i}`;
      const created = await until(
        `${name} to be created`,
        async () => {
          const res = await admin.request('POST', '/organizations/default/nodes', { name });
          if (res.status !== 503) return res.status;
          return undefined;
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
    t.equal(from, oldMaster);
    t.not(to, from, 'the sentinel names the replica as the master');
    t.equal((await getJob(await c.admin(second), before)).status, 'complete', 'the job of the old master is kept');
    t.ok(
      await until('both processes to serve every partition again', served, 30_000),
      'both members serve every partition again',
    );
    // The nodes made after the failover are on the new master, under their organization's hash tag.
    const keys =
      (await onPort(to, (r) => r.hkeys(collectionKey('infra:', partitionOfDoc(NODES, 'after-0'), NODES)))) ?? [];
    t.ok(keys.includes('after-0') && keys.includes('after-1'), 'the new master holds what was written after it');
    // A job started now runs to the end on the new master, every node with it: the members' registrations ran on
    // through the seconds Redis was being replaced, so no node was moved and none is unavailable.
    const after = await startJob(await c.admin(first), 'hello', ['sn1', 'sn2']);
    const job = await jobEnd(await c.admin(second), after, 30_000);
    t.equal(job.status, 'complete', 'a job started after the failover completes');
    for (const n of nodes) await n.stop();
  },
);

t.test('kill -9 of the master under Sentinel: no write answered is lost, and a job after completes', async (t) => {
  const redis = await startRedisSentinel(t);
  const c = await startCluster(t, 2, redis.url);
  const served = async () => {
    const all = await Promise.all(c.servers.map(clusterOf));
    const partitions = all.reduce((n, s) => n + (s?.partitions ?? 0), 0);
    return partitions === ALL_PARTITIONS && all.every((s) => s?.members.length === 2) ? all : undefined;
  };
  await until('every partition to be served', served, 30_000);
  const [first, second] = c.servers as [(typeof c.servers)[0], (typeof c.servers)[0]];
  const nodes = await fleet(t, c, first, ['sk1', 'sk2']);
  const admins = [await c.admin(first), await c.admin(second)];
  // Nodes are created through both members, one after another, while the master is killed and replaced: each
  // is answered 201 (stored, on a replica too) or refused (503), never answered and then lost.
  let writing = true;
  const answered: string[] = [];
  const refused: string[] = [];
  const writers = admins.map(async (admin, i) => {
    for (let n = 0; writing; n++) {
      const name = `w${i}-${n}`;
      const res = await admin.request('POST', '/organizations/default/nodes', { name }).catch(() => undefined);
      if (res?.status === 201) answered.push(name);
      else {
        refused.push(`${name}: ${res?.status ?? 'no answer'}`);
        await new Promise((resolve) => setTimeout(resolve, 20)); // as a client told to try again would
      }
    }
  });
  await until('writes to be answered', async () => (answered.length >= 10 ? true : undefined), 20_000);
  const { from, to } = await redis.killMaster();
  t.not(to, from, 'the sentinel names a replica the master');
  const afterKill = answered.length;
  await until(
    'writes to be answered on the new master',
    async () => (answered.length >= afterKill + 10 ? true : undefined),
    30_000,
  );
  writing = false;
  await Promise.all(writers);
  t.comment(`${answered.length} nodes answered 201, ${refused.length} refused`);
  t.same([...new Set(refused.map((r) => r.slice(r.indexOf(': ') + 2)))], ['503'], 'every other was refused with 503');
  const held = new Set(
    (await onPort(to, (r) => r.hkeys(collectionKey('infra:', partitionOfDoc(NODES, 'w0-0'), NODES)))) ?? [],
  );
  t.same(
    answered.filter((name) => !held.has(name)),
    [],
    'every node answered 201 is on the new master',
  );
  t.ok(await until('both processes to serve every partition', served, 30_000));
  const job = await jobEnd(
    await c.admin(second),
    await startJob(await c.admin(first), 'hello', ['sk1', 'sk2']),
    30_000,
  );
  t.equal(job.status, 'complete', 'a job started after the kill completes');
  for (const n of nodes) await n.stop();
});
