// redis_min_replicas: a write counts as stored only once that many replicas hold it. On a master without a replica
// it is refused, and a store with the setting at 0 takes it as before.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { holdEveryPartition } from '../../src/cluster/leases.js';
import { openStore } from '../../src/store/open-store.js';
import { NotReplicatedError } from '../../src/store/redis-replication.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { until } from '../support/deadline.js';
import { startPrivateRedis } from '../support/private-redis.js';
import { answers, killAll, onPort } from '../support/redis-probe.js';
import { uniquePrefix } from '../support/redis.js';
import { freePort } from '../support/server-process.js';

/** How long a write on a master without replicas waits before it is refused. */
const REFUSED_WAIT_MS = 200;
/** Long enough for a replica of a busy machine to acknowledge: WAIT returns as soon as it does. */
const STORED_WAIT_MS = 10_000;

/**
 * Runs `use` on a store holding every lease, as a server alone does, and closes it afterwards, failed or not: before
 * its Redis is killed at the test's end, and without leaving connections that would keep the file running.
 */
async function withStore(
  url: string,
  minReplicas: number,
  timeoutMs: number,
  use: (store: RedisStore) => Promise<void>,
): Promise<void> {
  const store = await RedisStore.connect(url, uniquePrefix(), undefined, { minReplicas, timeoutMs });
  const leases = await holdEveryPartition(store);
  try {
    await use(store);
  } finally {
    await leases.stop(true);
    await store.close();
  }
}

t.test('a write waits for its replica: refused while the master has none, stored once one follows', async (t) => {
  const redis = await startPrivateRedis(t);
  await withStore(redis.url, 1, REFUSED_WAIT_MS, async (store) => {
    t.equal(store.replication.minReplicas, 1);
    await t.rejects(store.put('org/default/nodes', 'n1', { name: 'n1' }), NotReplicatedError);
    await t.rejects(store.put('org/default/nodes', 'n1', { name: 'n1' }), {
      message: /0 of the 1 Redis replicas asked for \(redis_min_replicas\) acknowledged the write within 200 ms/,
    });
  });

  const port = await freePort();
  const masterPort = new URL(redis.url).port;
  // A folder of its own: a replica writes the master's snapshot to disk as it syncs.
  const dir = await mkdtemp(join(tmpdir(), 'infra-test-replica-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir];
  const replica = spawn('redis-server', [...args, '--replicaof', '127.0.0.1', masterPort], { stdio: 'ignore' });
  t.teardown(async () => {
    await killAll([replica]);
    await rm(dir, { recursive: true, force: true });
  });
  await until('the replica to answer', () => answers(port), 10_000);
  await until(
    'the replica to be in sync',
    async () =>
      (await onPort(port, (r) => r.info('replication')))?.includes('master_link_status:up') ? true : undefined,
    15_000,
  );
  await withStore(redis.url, 1, STORED_WAIT_MS, async (store) => {
    await store.put('org/default/nodes', 'n2', { name: 'n2' });
    t.same(await store.get('org/default/nodes', 'n2'), { name: 'n2' }, 'the write is stored once a replica holds it');
  });
  const onReplica = await until(
    'the replica to hold the write',
    async () => ((await onPort(port, (r) => r.keys(`*org/default/nodes*`)))?.length ?? 0) > 0 || undefined,
    5000,
  );
  t.ok(onReplica);
});

t.test('with no replica asked for, a lone master takes writes', async (t) => {
  const redis = await startPrivateRedis(t);
  await withStore(redis.url, 0, REFUSED_WAIT_MS, async (store) => {
    await store.put('org/default/nodes', 'n1', { name: 'n1' });
    t.same(await store.get('org/default/nodes', 'n1'), { name: 'n1' });
  });
});

t.test('a Redis URL without Sentinel asks no replica unless told; redis_min_replicas says how many', async (t) => {
  const redis = await startPrivateRedis(t);
  const plain = await openStore({ redis_url: redis.url, data_dir: '/nonexistent', store_timeout: 2 });
  t.equal((plain as RedisStore).replication.minReplicas, 0);
  await plain.close();
  const told = await openStore({
    redis_url: redis.url,
    data_dir: '/nonexistent',
    store_timeout: 2,
    redis_min_replicas: 2,
  });
  t.equal((told as RedisStore).replication.minReplicas, 2);
  await told.close();
});
