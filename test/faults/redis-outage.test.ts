// A Redis of the test's own, killed under a running server and started again with and without its data: reads
// keep being answered from memory, writes are refused (503) instead of waiting for the store and leave nothing half
// applied, pending saves land when Redis returns, and a Redis that comes back empty gets everything back. How long
// requests take during an outage is measured by bench/redis-outage.bench.ts, not asserted here.
import { Redis } from 'ioredis';
import t from 'tap';
import { serverStatusSchema } from '../../src/api/status-schema.js';
import { jobsCollection } from '../../src/store/collections.js';
import type { Store } from '../../src/store/store.js';
import { until } from '../support/deadline.js';
import { startPrivateRedis } from '../support/private-redis.js';
import { getJob, startJob, waitForJob } from '../support/push-api.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ack, startTestNode } from '../support/test-node.js';

const STORE_TIMEOUT_S = 1;
const FAST = { heartbeat_interval: 100, offline_threshold: 8, online_threshold: 2, voting_timeout: 5 };
const NODES = '/organizations/default/nodes';

const node = (name: string) => ({ name, json_class: 'Chef::Node', chef_type: 'node', run_list: [] });

/** `store` with a count of the writes of job node fields it was asked for (the first write of a new job). */
function countingJobWrites(store: Store, counts: { jobWrites: number }): Store {
  const jobs = jobsCollection('default');
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (property !== 'putFields') return value.bind(target);
      return (...args: unknown[]) => {
        if (args[0] === jobs) counts.jobWrites += 1;
        return Reflect.apply(value, target, args);
      };
    },
  });
}

async function status(s: TestServer) {
  const res = await fetch(new URL('/_status', s.url));
  return { code: res.status, body: serverStatusSchema.parse(await res.json()) };
}

t.test('while Redis is away reads are answered, writes refused with a 503, and nothing is half applied', async (t) => {
  const redis = await startPrivateRedis(t);
  const s = await startTestServer(t, 'redis', { redis_url: redis.url, store_timeout: STORE_TIMEOUT_S, ...FAST });
  t.equal((await s.admin.request('POST', NODES, node('before'))).status, 201);

  await redis.kill();
  const read = await s.admin.request('GET', `${NODES}/before`);
  t.equal(read.status, 200, 'a node is read from memory');
  const write = await s.admin.request('POST', NODES, node('during'));
  t.equal(write.status, 503, 'a write is refused');
  t.match(write.body, { error: [/data store is unavailable/] }, 'with a JSON error saying why');
  t.match(await status(s), { code: 503, body: { status: 'degraded' } }, '/_status says degraded');

  await redis.start({ keepData: true });
  await until('the server to be whole again', async () => ((await status(s)).code === 200 ? true : undefined), 15_000);
  t.equal((await s.admin.request('GET', `${NODES}/during`)).status, 404, 'the refused write left nothing behind');
  t.equal((await s.admin.request('POST', NODES, node('during'))).status, 201, 'and can be made now');
});

t.test("a new job waiting for a hung Redis does not hold up its organization's other requests", async (t) => {
  const redis = await startPrivateRedis(t);
  const counts = { jobWrites: 0 };
  const s = await startTestServer(
    t,
    'redis',
    { redis_url: redis.url, store_timeout: STORE_TIMEOUT_S, ...FAST },
    undefined,
    { store: (store) => countingJobWrites(store, counts) },
  );
  t.equal((await s.admin.request('POST', NODES, node('hung-1'))).status, 201);
  redis.freeze();
  t.teardown(() => redis.thaw());
  let jobAnswered = false;
  const job = s.admin.request('POST', '/organizations/default/pushy/jobs', {
    command: 'chef-client',
    nodes: ['hung-1'],
  });
  void job.then(() => (jobAnswered = true));
  // The organization has taken the job's request once it asks the store to write the job.
  await until('the new job to be written to the hung store', () => (counts.jobWrites > 0 ? true : undefined), 10_000);
  const listed = await s.admin.request('GET', '/organizations/default/pushy/jobs');
  t.equal(listed.status, 200, 'the job list is read while the new job waits for the store');
  t.equal(jobAnswered, false, 'and answered while the job still waits, not behind it');
  const refused = await job;
  t.equal(refused.status, 503, 'the job the store does not take is refused');
  redis.thaw();
  await until('the server to be whole again', async () => ((await status(s)).code === 200 ? true : undefined), 15_000);
  const jobs = (await s.admin.request('GET', '/organizations/default/pushy/jobs')).body;
  t.same(jobs, [], 'the refused job was never started');
});

t.test('a running job answers while Redis is away, and its result is stored when Redis returns', async (t) => {
  const redis = await startPrivateRedis(t);
  let s = await startTestServer(t, 'redis', { redis_url: redis.url, store_timeout: STORE_TIMEOUT_S, ...FAST });
  const n = await startTestNode(s, 'out-1', { run: ack() });
  t.teardown(() => n.stop());
  const id = await startJob(s.admin, { command: 'chef-client', nodes: ['out-1'] });
  await waitForJob(s.admin, id, 'running');

  await redis.kill();
  n.finish(0);
  await until('the node to report', () => (n.sent.some((r) => r.body.type === 'succeeded') ? true : undefined), 5000);
  // The saver gives up on the store after store_timeout; from then on the job shows what it could not store. Every
  // read on the way is answered 200 (getJob throws on anything else).
  const seen = await until(
    'the job to show the result',
    async () => {
      const job = await getJob(s.admin, id);
      return job.nodes.succeeded?.includes('out-1') ? job : undefined;
    },
    STORE_TIMEOUT_S * 1000 + 10_000,
  );
  t.match(seen, { id, nodes: { succeeded: ['out-1'] } }, 'showing the result it could not store yet');

  await redis.start({ keepData: true });
  await until('the result to be stored', async () => ((await status(s)).code === 200 ? true : undefined), 15_000);
  await waitForJob(s.admin, id, 'complete');
  s = await s.restart();
  t.match(await getJob(s.admin, id), { status: 'complete', nodes: { succeeded: ['out-1'] } }, 'a restart finds it');
});

t.test('a Redis that comes back empty gets everything the server holds', async (t) => {
  const redis = await startPrivateRedis(t);
  let s = await startTestServer(t, 'redis', { redis_url: redis.url, store_timeout: STORE_TIMEOUT_S, ...FAST });
  t.equal((await s.admin.request('POST', NODES, node('kept-1'))).status, 201);
  t.equal((await s.admin.request('POST', '/organizations/default/clients', { name: 'kept-client' })).status, 201);

  await redis.kill();
  await redis.start({ keepData: false });
  const probe = new Redis(redis.url);
  probe.on('error', () => undefined); // it reconnects on its own while the server writes back
  t.teardown(() => probe.quit());
  // The server writes its marker again once everything it held is written back.
  await until(
    'the server to write its data back',
    async () => ((await probe.keys('*:marker')).length > 0 ? true : undefined),
    20_000,
  );
  await until('the server to be whole', async () => ((await status(s)).code === 200 ? true : undefined), 15_000);

  s = await s.restart();
  t.equal((await s.admin.request('GET', `${NODES}/kept-1`)).status, 200, 'the node is back after a restart');
  t.equal((await s.admin.request('GET', '/organizations/default/clients/kept-client')).status, 200, 'the client too');
  t.match(
    (await s.pivotal.request('GET', '/organizations/default/groups/clients')).body,
    { clients: ['kept-client'] },
    'and the groups that list it',
  );
  t.equal((await s.pivotal.request('GET', '/users/admin')).status, 200, 'and the accounts');
});
