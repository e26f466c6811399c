// Node gateways: every process of a cluster holds some of an organization's nodes, whichever process owns the
// organization, and job messages and node answers cross between them through Redis Streams. Real server processes
// on a private Redis, real push-jobs-client processes.
import t from 'tap';
import { serverStatusSchema } from '../../src/api/status-schema.js';
import { partitionName, partitionOf } from '../../src/store/partitions.js';
import { fleet, jobEnd, ownerOf, settledOwnerOf, startCluster, startJob } from '../support/cluster.js';
import { until } from '../support/deadline.js';
import { statusOf } from '../support/hostile.js';
import { waitForNodes } from '../support/node-fleet.js';
import { startPrivateRedis } from '../support/private-redis.js';
import type { ServerProcess } from '../support/server-process.js';

// Faults of real processes (kill -9, SIGSTOP past a registration, a Redis restart), each waited out: about two
// minutes alone.
t.setTimeout(300_000);

const DEFAULT_PARTITION = partitionName(partitionOf('default'));
const NAMES = ['g1', 'g2', 'g3', 'g4', 'g5', 'g6'];

/** Nodes each server hears now (its gateway's connections). */
async function connected(server: ServerProcess): Promise<number> {
  const answer = await fetch(`${server.url}/_status`, { signal: AbortSignal.timeout(5000) });
  return serverStatusSchema.parse(await answer.json()).push_jobs?.connected_nodes ?? 0;
}

/** A process that holds nodes of the organization but does not own it. */
function gatewayBesides(servers: readonly ServerProcess[], owner: ServerProcess): Promise<ServerProcess> {
  return until(
    'a process that holds nodes but does not own the organization',
    async () => {
      for (const s of servers) if (s !== owner && (await connected(s)) > 0) return s;
      return undefined;
    },
    20_000,
  );
}

/** Resolves once `servers` together hear every node. */
async function allHeardBy(servers: readonly ServerProcess[], what: string): Promise<void> {
  await until(
    what,
    async () => {
      const each = await Promise.all(servers.map(connected));
      return each.reduce((a, b) => a + b, 0) === NAMES.length ? true : undefined;
    },
    40_000,
  );
}

t.test('one organization’s nodes spread over every process, and a job runs on all of them', async (t) => {
  const c = await startCluster(t, 3);
  const owner = await settledOwnerOf(c.servers, DEFAULT_PARTITION);
  const nodes = await fleet(t, c, owner, NAMES);
  const counts = await allHeard(c.servers);
  t.comment(`nodes per process: ${counts.join(', ')} (the owner is process ${c.servers.indexOf(owner) + 1})`);
  t.ok(counts.filter((n) => n > 0).length >= 2, 'at least two processes hold nodes of the one organization');
  t.ok(
    counts.some((n, i) => n > 0 && c.servers[i] !== owner),
    'some nodes are held by a process that does not own the organization',
  );
  const admin = await c.admin(owner);
  const job = await jobEnd(admin, await startJob(admin, 'hello', NAMES), 30_000);
  t.equal(job.status, 'complete', 'a job over all of them completes');
  t.same(job.nodes, { succeeded: NAMES }, 'with the answer of every node, wherever it is connected');
  for (const n of nodes) await n.stop();
});

t.test('kill -9 of a gateway: its nodes move to another, and the owner keeps the organization', async (t) => {
  const c = await startCluster(t, 3);
  const owner = await settledOwnerOf(c.servers, DEFAULT_PARTITION);
  const nodes = await fleet(t, c, owner, NAMES);
  const admin = await c.admin(owner);
  const gateway = await gatewayBesides(c.servers, owner);
  const held = await connected(gateway);
  process.kill(gateway.pid, 'SIGKILL');
  const survivors = c.servers.filter((s) => s !== gateway);
  await allHeardBy(survivors, 'the nodes of the killed gateway to connect to the others');
  t.pass(`the ${held} nodes of the killed gateway are heard by the survivors`);
  await waitForNodes(admin, nodes, 'available', 40_000);
  t.equal(await ownerOf(survivors, DEFAULT_PARTITION), owner, 'the organization stayed with its owner');
  const job = await jobEnd(admin, await startJob(admin, 'hello', NAMES), 30_000);
  t.equal(job.status, 'complete', 'a job over every node completes');
  t.same(job.nodes, { succeeded: NAMES });
  for (const n of nodes) await n.stop();
});

t.test(
  'SIGSTOP of a gateway past its registration: its nodes move, and once it wakes it speaks for none',
  async (t) => {
    const c = await startCluster(t, 3);
    const owner = await settledOwnerOf(c.servers, DEFAULT_PARTITION);
    const nodes = await fleet(t, c, owner, NAMES);
    const admin = await c.admin(owner);
    const gateway = await gatewayBesides(c.servers, owner);
    process.kill(gateway.pid, 'SIGSTOP');
    t.teardown(() => void process.kill(gateway.pid, 'SIGCONT'));
    const survivors = c.servers.filter((s) => s !== gateway);
    await allHeardBy(survivors, 'the frozen gateway’s nodes to connect to the others');
    await waitForNodes(admin, nodes, 'available', 40_000);
    process.kill(gateway.pid, 'SIGCONT');
    // Woken, it finds its nodes silent: it says they went down (the owner knows they left it and ignores that),
    // or it has read their new sessions first and forgotten them. Either way it counts none an offline window on.
    await until(
      'the woken gateway to count no node',
      async () => ((await connected(gateway)) === 0 ? true : undefined),
      30_000,
    );
    await waitForNodes(admin, nodes, 'available', 5000);
    t.pass('every node stays available');
    const job = await jobEnd(admin, await startJob(admin, 'hello', NAMES), 30_000);
    t.equal(job.status, 'complete', 'and a job over every node completes');
    t.same(job.nodes, { succeeded: NAMES });
    for (const n of nodes) await n.stop();
  },
);

t.test(
  'Redis killed and started again for longer than a lease: every node keeps its gateway, and jobs run across them',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const c = await startCluster(t, 3, redis.url);
    const owner = await settledOwnerOf(c.servers, DEFAULT_PARTITION);
    const nodes = await fleet(t, c, owner, NAMES);
    const admin = await c.admin(owner);
    const before = await allHeard(c.servers);
    t.equal((await jobEnd(admin, await startJob(admin, 'hello', NAMES), 30_000)).status, 'complete');
    // The members' reads of the streams block on Redis when it goes. It stays away until the owner's lease has run
    // out as the owner counts it: it then stops answering for the organization, even reads it holds in memory.
    await redis.kill();
    await until(
      'every member to find the store away, and the owner to stop answering for the organization',
      async () => {
        const states = await Promise.all(c.servers.map(storeState));
        if (!states.every((s) => s === 'unavailable')) return undefined;
        return (await admin.request('GET', '/organizations/default/nodes/g1')).status === 503 ? true : undefined;
      },
      30_000,
    );
    await redis.start();
    await until(
      'every member to use the store again',
      async () => ((await Promise.all(c.servers.map(storeState))).every((s) => s === 'ok') ? true : undefined),
      30_000,
    );
    // Redis heard no member for the whole outage: their registrations ran on, so no node changed gateway.
    t.same(await allHeard(c.servers), before, 'each process holds the nodes it held before');
    t.equal(await ownerOf(c.servers, DEFAULT_PARTITION), owner, 'the organization stayed with its owner');
    // The owner serves again once it has renewed its registration (503, Retry-After: 1, until then).
    const started = await until(
      'the owner to take a job',
      async () => {
        const res = await admin.request('POST', '/organizations/default/pushy/jobs', {
          command: 'hello',
          nodes: NAMES,
        });
        return res.status === 503 ? undefined : res;
      },
      15_000,
      200,
    );
    t.equal(started.status, 201, 'a job is taken');
    const job = await jobEnd(admin, (started.body as { id: string }).id, 30_000);
    t.equal(job.status, 'complete', 'a job over the nodes of every gateway completes');
    t.same(job.nodes, { succeeded: NAMES });
    for (const n of nodes) await n.stop();
  },
);

/** The nodes each server hears, once together they hear every node. */
function allHeard(servers: readonly ServerProcess[]): Promise<number[]> {
  return until(
    'every node to be heard by some gateway',
    async () => {
      const each = await Promise.all(servers.map(connected));
      return each.reduce((a, b) => a + b, 0) === NAMES.length ? each : undefined;
    },
    20_000,
  );
}

async function storeState(server: ServerProcess): Promise<string | undefined> {
  return (await statusOf(server.url)).store?.state;
}
