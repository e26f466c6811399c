// A Redis under Sentinel of a test's own: a master, two replicas of it and one sentinel watching them under the name
// `infra`, each a redis-server on a free loopback port in one folder. Two replicas, as Sentinel's own guide has it:
// once one is promoted, the other follows it soon after, so writes go on. The test may fail the master over to a
// replica as an operator would (SENTINEL FAILOVER), or kill it (-9) for the sentinel to replace. Killed at teardown.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './deadline.js';
import { answers, killAll, onPort } from './redis-probe.js';
import { freePorts } from './server-process.js';
import type { TeardownScope } from './teardown-scope.js';

export const MASTER_NAME = 'infra';

export interface PrivateSentinel {
  /** `redis+sentinel://127.0.0.1:PORT/infra`: what a server's redis_url names. */
  url: string;
  /** The port of the master now, as the sentinel tells it. */
  master(): Promise<number>;
  /** Resolves once the server on `port` is a replica in sync with the master (the old master, once turned). */
  following(port: number): Promise<void>;
  /** Promotes a replica; resolves once the sentinel names it and it takes writes, the other replica following it. */
  failover(): Promise<{ from: number; to: number }>;
  /** SIGKILL of the master: the sentinel promotes a replica once the master is silent for a second. */
  killMaster(): Promise<{ from: number; to: number }>;
  /**
   * Starts the server killed on `port` again as a replica of the master now, as an operator brings a failed host
   * back (it kept no data: it copies the master's); resolves once it is in sync, so that the next failover has two
   * replicas to choose from again.
   */
  restore(port: number): Promise<void>;
}

export async function startRedisSentinel(t: TeardownScope): Promise<PrivateSentinel> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-test-sentinel-'));
  /** The processes by port; `spawned` holds every process started, for the teardown. */
  const children = new Map<number, ChildProcess>();
  const spawned: ChildProcess[] = [];
  const start = (port: number, args: string[]) => {
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    spawned.push(child);
    children.set(port, child);
  };
  t.teardown(async () => {
    await killAll(spawned);
    await rm(dir, { recursive: true, force: true });
  });
  const [master, sentinel, ...replicas] = (await freePorts(4)) as [number, number, number, number];
  const server = (port: number, ...more: string[]) => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    start(port, [...args, '--dir', dir, ...more]);
  };
  server(master);
  for (const replica of replicas) server(replica, '--replicaof', '127.0.0.1', String(master));
  for (const port of [master, ...replicas]) await until(`redis-server on port ${port}`, () => answers(port), 10_000);
  const replicaSynced = async (port: number): Promise<true | undefined> => {
    const info = await onPort(port, (r) => r.info('replication'));
    return info?.includes('role:slave') && info.includes('master_link_status:up') ? true : undefined;
  };
  for (const replica of replicas)
    await until(`the replica on port ${replica} to be in sync with the master`, () => replicaSynced(replica), 15_000);
  // A sentinel rewrites its configuration file, so it is started from one of its own. One sentinel is a quorum of
  // one; a master silent for a second would be failed over without being asked.
  const conf = join(dir, 'sentinel.conf');
  await writeFile(
    conf,
    [
      `port ${sentinel}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${master} 1`,
      `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
      `sentinel failover-timeout ${MASTER_NAME} 10000`,
      '',
    ].join('\n'),
  );
  start(sentinel, [conf, '--sentinel']);
  const masterPort = async (): Promise<number | undefined> => {
    const addr = await onPort(sentinel, (r) => r.call('SENTINEL', 'get-master-addr-by-name', MASTER_NAME));
    return Array.isArray(addr) ? Number(addr[1]) : undefined;
  };
  const sentinelSeesReplicas = async (): Promise<true | undefined> => {
    const known = await onPort(sentinel, (r) => r.call('SENTINEL', 'replicas', MASTER_NAME));
    return Array.isArray(known) && known.length === replicas.length ? true : undefined;
  };
  // Sentinel learns the replicas from the master's INFO: once as it starts, then every 10 s. Started after they are
  // in sync, it knows them from its first INFO instead of waiting out the next one.
  await until('the sentinel to know the master and its replicas', sentinelSeesReplicas, 30_000);
  /** The new master once the sentinel names another than `from` and it takes writes with a replica following it. */
  const promotedFrom = async (from: number): Promise<number> => {
    const to = await until(
      'the sentinel to name a new master',
      async () => {
        const now = await masterPort();
        return now !== undefined && now !== from ? now : undefined;
      },
      20_000,
    );
    // Sentinel turns the old master into a replica only seconds later: until then it takes writes of its own.
    await until(
      `the new master on port ${to} to take writes, with a replica`,
      async () => {
        const info = (await onPort(to, (r) => r.info('replication'))) ?? '';
        return info.includes('role:master') && !info.includes('connected_slaves:0') ? true : undefined;
      },
      20_000,
    );
    return to;
  };
  return {
    url: `redis+sentinel://127.0.0.1:${sentinel}/${MASTER_NAME}`,
    master: async () => until('the sentinel to name the master', masterPort, 10_000),
    following: async (port) => {
      await until(`the server on port ${port} to follow the master`, () => replicaSynced(port), 60_000, 200);
    },
    failover: async () => {
      const from = await until('the sentinel to name the master', masterPort, 10_000);
      await onPort(sentinel, (r) => r.call('SENTINEL', 'failover', MASTER_NAME));
      return { from, to: await promotedFrom(from) };
    },
    killMaster: async () => {
      const from = await until('the sentinel to name the master', masterPort, 10_000);
      await killAll([children.get(from)].filter((c): c is ChildProcess => c !== undefined));
      return { from, to: await promotedFrom(from) };
    },
    restore: async (port) => {
      const alive = children.get(port);
      if (alive !== undefined && alive.exitCode === null && alive.signalCode === null)
        throw new Error(`the server on port ${port} still runs`);
      const now = await until('the sentinel to name the master', masterPort, 10_000);
      server(port, '--replicaof', '127.0.0.1', String(now));
      await until(`the server on port ${port} to follow the master`, () => replicaSynced(port), 60_000, 200);
    },
  };
}
