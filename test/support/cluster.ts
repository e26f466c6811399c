// Server processes on one Redis forming a cluster, for end-to-end tests: started together with a shared data_dir
// (whichever sets the cluster up writes the first start's keys there), their /_status cluster figures, and real
// push-jobs-client nodes on the default organization.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import type { JobBody } from '../../src/api/push-jobs.js';
import { isFinished } from '../../src/push/job-states.js';
import { serverStatusSchema, type ClusterStatus } from '../../src/api/status-schema.js';
import { ApiClient } from '../../src/auth/api-client.js';
import { preferredOwner } from '../../src/cluster/ownership.js';
import { until } from './deadline.js';
import { startNodeFleet, waitForNodes, type FleetNode } from './node-fleet.js';
import { getJob } from './push-api.js';
import { startPrivateRedis } from './private-redis.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import type { TeardownScope } from './teardown-scope.js';

/** Every partition and the global one. */
const ALL_PARTITIONS = 65;

/** Short, for quick take-overs, yet long enough that a machine busy with other tests does not lose leases. */
const LEASE_TTL_S = 3;

export interface Cluster {
  servers: ServerProcess[];
  dataDir: string;
  /** pivotal's client against a server. */
  pivotal(server: ServerProcess): Promise<ApiClient>;
  admin(server: ServerProcess): Promise<ApiClient>;
}

/** `size` server processes on one Redis: a private one, or the Redis (Cluster) `redisUrl` names. */
export async function startCluster(t: TeardownScope, size: number, redisUrl?: string): Promise<Cluster> {
  const redis = redisUrl === undefined ? await startPrivateRedis(t) : { url: redisUrl };
  const dataDir = await mkdtemp(join(tmpdir(), 'infra-cluster-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const settings = {
    redis_url: redis.url,
    data_dir: dataDir,
    lease_ttl: LEASE_TTL_S,
    heartbeat_interval: 200,
    server_name: '127.0.0.1',
    queue_listen_address: 'tcp://127.0.0.1',
  };
  // Started together: one sets the cluster up (its keys land in the shared data_dir), the others wait for it.
  const servers = await Promise.all(
    Array.from({ length: size }, () => startServerProcess(t, { settings, startTimeoutMs: 40_000 })),
  );
  const client = async (server: ServerProcess, user: string) =>
    new ApiClient({ baseUrl: server.url, userId: user, key: await readFile(join(dataDir, `${user}.pem`), 'utf8') });
  const c: Cluster = {
    servers,
    dataDir,
    pivotal: (s) => client(s, 'pivotal'),
    admin: (s) => client(s, 'admin'),
  };
  await settled(c);
  return c;
}

/**
 * Resolves once every member sees all of them and every partition is served by the member that should own it: the
 * hand-overs after a start (a few partitions a tick) are done, and requests are answered where they land.
 */
export async function settled(c: Cluster, timeoutMs = 40_000): Promise<void> {
  await until(
    'every partition to be served by the member that should own it',
    async () => {
      const all = await Promise.all(c.servers.map(clusterOf));
      if (all.some((s) => s?.members.length !== c.servers.length)) return undefined;
      const ids = all.map((s) => s?.member ?? '');
      const where = (p: string) => all.findIndex((s) => s?.held.includes(p));
      for (let p = 0; p < ALL_PARTITIONS - 1; p++) if (ids[where(`p${p}`)] !== preferredOwner(p, ids)) return undefined;
      return where('global') >= 0 ? true : undefined;
    },
    timeoutMs,
    200,
  );
}

export async function clusterOf(server: ServerProcess): Promise<ClusterStatus | undefined> {
  const answer = await fetch(`${server.url}/_status`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
  if (!answer) return undefined;
  return serverStatusSchema.parse(await answer.json()).cluster;
}

/** The server serving `partition` (`p7`) now, once exactly one of the running ones says so. */
export async function ownerOf(servers: readonly ServerProcess[], partition: string, timeoutMs = 20_000) {
  return until(
    `one server to serve ${partition}`,
    async () => {
      const holders = [];
      for (const s of servers) if ((await clusterOf(s))?.held.includes(partition)) holders.push(s);
      return holders.length === 1 ? holders[0] : undefined;
    },
    timeoutMs,
    100,
  );
}

/**
 * The server serving `partition` once it is the one rendezvous hashing picks among the live members: the
 * hand-overs after a start are done, and only a member leaving moves the partition from then on.
 */
export async function settledOwnerOf(servers: readonly ServerProcess[], partition: string, timeoutMs = 30_000) {
  return until(
    `${partition} to be served by its preferred member`,
    async () => {
      const all = await Promise.all(servers.map(clusterOf));
      const members = all[0]?.members.map((m) => m.id) ?? [];
      const preferred = preferredOwner(Number(partition.slice(1)), members);
      const at = all.findIndex((s) => s !== undefined && s.member === preferred && s.held.includes(partition));
      return members.length === servers.length && at >= 0 ? servers[at] : undefined;
    },
    timeoutMs,
    100,
  );
}

export async function jobEnd(admin: ApiClient, id: string, timeoutMs: number): Promise<JobBody> {
  return until(
    `job ${id} to end`,
    async () => {
      const job = await getJob(admin, id).catch(() => undefined);
      return job && isFinished(job.status) ? job : undefined;
    },
    timeoutMs,
    200,
  );
}

export async function startJob(admin: ApiClient, command: string, nodes: readonly string[]): Promise<string> {
  const started = await admin.request('POST', '/organizations/default/pushy/jobs', { command, nodes });
  if (started.status !== 201) throw new Error(`job start: ${started.status} ${JSON.stringify(started.body)}`);
  return (started.body as { id: string }).id;
}

export async function fleet(t: TeardownScope, c: Cluster, entry: ServerProcess, names: string[]): Promise<FleetNode[]> {
  const dir = await mkdtemp(join(tmpdir(), 'cluster-nodes-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const nodes = await startNodeFleet(t, {
    serverUrl: entry.url,
    validationKey: join(c.dataDir, 'default-validator.pem'),
    dir,
    names,
    whitelist: () => ({ hello: 'echo hello', nap: 'sleep 3' }),
  });
  await waitForNodes(await c.admin(entry), nodes, 'available', 30_000);
  return nodes;
}

/** A probe for until(): the statuses once the members serve every partition and each sees all of them. */
export function everyPartitionServed(c: Cluster): () => Promise<Array<ClusterStatus | undefined> | undefined> {
  return async () => {
    const all = await Promise.all(c.servers.map(clusterOf));
    const partitions = all.reduce((n, s) => n + (s?.partitions ?? 0), 0);
    return partitions === ALL_PARTITIONS && all.every((s) => s?.members.length === c.servers.length) ? all : undefined;
  };
}

/**
 * Creates node `${prefix}-i` through each member i (told to try again while it answers 503), checks it is created
 * and read back through the next member; answers the names.
 */
export async function createThroughEach(t: Test, c: Cluster, prefix: string): Promise<string[]> {
  const admins = await Promise.all(c.servers.map((s) => c.admin(s)));
  const names: string[] = [];
  for (const [i, admin] of admins.entries()) {
    const name = `${prefix}-${i}`;
    const created = await until(
      `${name} to be created`,
      async () => {
        const res = await admin.request('POST', '/organizations/default/nodes', { name });
        return res.status === 503 ? undefined : res.status;
      },
      30_000,
      250,
    );
    t.equal(created, 201, `a node is created through process ${i + 1}`);
    const other = admins[(i + 1) % admins.length] as ApiClient;
    t.equal(
      (await other.request('GET', `/organizations/default/nodes/${name}`)).status,
      200,
      'and read through another',
    );
    names.push(name);
  }
  return names;
}

/** Writers creating nodes of `org` through every member without pause until stopped, as clients that retry a 503. */
export function keepCreating(admins: readonly ApiClient[], prefix: string, org = 'default') {
  let writing = true;
  const answered: Array<{ name: string; at: number }> = [];
  /** What each write not answered 201 got: its status, or `no answer`. */
  const refused: string[] = [];
  const writers = admins.map(async (admin, i) => {
    for (let n = 0; writing; n++) {
      const name = `${prefix}${i}-${n}`;
      const res = await admin.request('POST', `/organizations/${org}/nodes`, { name }).catch(() => undefined);
      if (res?.status === 201) answered.push({ name, at: Date.now() });
      else {
        refused.push(String(res?.status ?? 'no answer'));
        await new Promise((resolve) => setTimeout(resolve, 20)); // as a client told to try again would
      }
    }
  });
  return {
    answered,
    refused,
    /** Resolves once `count` more writes are answered 201 than now. */
    more: (count: number) => {
      const target = answered.length + count;
      return until(
        `${count} writes to be answered`,
        async () => (answered.length >= target ? true : undefined),
        60_000,
      );
    },
    stop: async () => {
      writing = false;
      await Promise.all(writers);
    },
  };
}
