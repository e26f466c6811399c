// A Redis Cluster of a test's own: three masters on free loopback ports (`redis-server --cluster-enabled yes`),
// joined by `redis-cli --cluster create`, in one folder; a replica of each when asked, so that a master can be failed
// over as an operator does (CLUSTER FAILOVER). Killed at teardown.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './deadline.js';
import { answers, killAll, onPort } from './redis-probe.js';
import { runProcess } from './process-run.js';
import { freePorts } from './server-process.js';
import type { TeardownScope } from './teardown-scope.js';

export interface PrivateRedisCluster {
  /** A URL naming one of the masters: enough for the server to find the others. */
  url: string;
  ports: number[];
  /** The port of the master serving `key`'s slot now. */
  masterOf(key: string): Promise<number>;
  /**
   * Promotes the replica of the master serving `key`'s slot (CLUSTER FAILOVER, sent to the replica: the master
   * hands over once the replica holds all it wrote); resolves once every node names the replica the slot's master.
   */
  failover(key: string): Promise<{ from: number; to: number }>;
  /** SIGKILL of the server on `port`: its replica is promoted once the others find it gone (2 s with replicas). */
  kill(port: number): Promise<void>;
  /** Resolves once every live node names another server than `port` the master of `key`'s slot; answers that one. */
  promoted(key: string, port: number): Promise<number>;
  /**
   * Starts the server killed on `port` again on its ports and cluster configuration file: it rejoins as a replica of
   * the master promoted in its place and copies its data; resolves once it is in sync.
   */
  restart(port: number): Promise<void>;
}

/** Sets of free ports tried for a node (see startNode). */
const PORT_ATTEMPTS = 3;

/** How long the nodes wait for a silent master before promoting its replica (Redis's default is 15 s). */
const NODE_TIMEOUT_MS = 2000;

export async function startRedisCluster(t: TeardownScope, masters = 3, replicas = 0): Promise<PrivateRedisCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-test-redis-cluster-'));
  /** The nodes up, by port; `spawned` holds every process started, for the teardown. */
  const children = new Map<number, ChildProcess>();
  /** The arguments each node was started with, by port, to start it again the same way. */
  const argsOf = new Map<number, string[]>();
  const spawned: ChildProcess[] = [];
  t.teardown(async () => {
    await killAll(spawned);
    await rm(dir, { recursive: true, force: true });
  });
  /**
   * One node on free ports: its own and its cluster bus's (by default its own plus 10,000, which may be taken or
   * past 65,535). A port found free can be taken before the node binds it: the node then exits, and new ports are
   * tried.
   */
  const startNode = async (): Promise<number> => {
    for (let attempt = 1; ; attempt++) {
      const [port, bus] = (await freePorts(2)) as [number, number];
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
      args.push('--cluster-enabled', 'yes', '--cluster-port', String(bus), '--dir', dir);
      args.push('--cluster-config-file', `nodes-${port}.conf`);
      if (replicas > 0) args.push('--cluster-node-timeout', String(NODE_TIMEOUT_MS));
      const child = spawn('redis-server', args, { stdio: 'ignore' });
      spawned.push(child);
      const exited = () => (child.exitCode !== null || child.signalCode !== null ? false : undefined);
      const up = await until(`redis-server on port ${port}`, async () => (await answers(port)) ?? exited(), 10_000);
      if (up) {
        children.set(port, child);
        argsOf.set(port, args);
        return port;
      }
      if (attempt === PORT_ATTEMPTS) throw new Error(`redis-server did not start on ${attempt} sets of free ports`);
    }
  };
  const ports: number[] = [];
  for (let i = 0; i < masters * (1 + replicas); i++) ports.push(await startNode());
  const created = await runProcess('redis-cli', [
    '--cluster',
    'create',
    ...ports.map((p) => `127.0.0.1:${p}`),
    '--cluster-replicas',
    String(replicas),
    '--cluster-yes',
  ]);
  if (created.code !== 0) throw new Error(`redis-cli --cluster create failed:\n${created.stdout}\n${created.stderr}`);
  await until(
    'the cluster to cover every slot',
    async () => {
      const info = await onPort(ports[0] ?? 0, (r) => r.cluster('INFO'));
      return typeof info === 'string' && info.includes('cluster_state:ok') ? true : undefined;
    },
    15_000,
  );
  // The slot is computed by the client's rule, which every node shares: asked of any node that answers.
  const slotOf = async (key: string) => {
    for (const port of ports) {
      const slot = await onPort(port, (r) => r.cluster('KEYSLOT', key));
      if (slot !== undefined) return Number(slot);
    }
    throw new Error('no node of the cluster answers');
  };
  /** The slot's master and replicas as `port` says. */
  const servers = async (port: number, slot: number) => {
    const ranges = (await onPort(port, (r) => r.cluster('SLOTS'))) ?? [];
    const range = ranges.find(([first, last]) => first <= slot && slot <= last);
    // The master first, then its replicas.
    return (range?.slice(2) ?? []).flatMap((node) => (Array.isArray(node) ? [node[1]] : []));
  };
  const masterOf = async (key: string) => {
    const slot = await slotOf(key);
    return until(`a master of slot ${slot}`, async () => (await servers(ports[0] ?? 0, slot))[0], 10_000);
  };
  if (replicas > 0)
    await until(
      'every master to have its replicas in sync, as every node knows',
      async () => {
        let synced = 0;
        for (const port of ports) {
          const ranges = (await onPort(port, (r) => r.cluster('SLOTS'))) ?? [];
          if (ranges.length === 0 || ranges.some((range) => range.length < 3 + replicas)) return undefined;
          const info = (await onPort(port, (r) => r.info('replication'))) ?? '';
          if (info.includes('master_link_status:up')) synced += 1;
        }
        return synced === masters * replicas ? true : undefined;
      },
      30_000,
      200,
    );
  const killed = new Set<number>();
  return {
    url: `redis://127.0.0.1:${ports[0]}`,
    ports,
    masterOf,
    kill: async (port) => {
      killed.add(port);
      await killAll([children.get(port)].filter((c): c is ChildProcess => c !== undefined));
    },
    promoted: async (key, port) => {
      const slot = await slotOf(key);
      const live = ports.filter((p) => !killed.has(p));
      return until(
        `a server other than ${port} to be named master of slot ${slot} by every live node`,
        async () => {
          const named = await Promise.all(live.map(async (p) => (await servers(p, slot))[0]));
          const first = named[0];
          return first !== undefined && first !== port && named.every((n) => n === first) ? first : undefined;
        },
        30_000,
        100,
      );
    },
    restart: async (port) => {
      const args = argsOf.get(port);
      if (args === undefined) throw new Error(`no node of the cluster was started on port ${port}`);
      const child = spawn('redis-server', args, { stdio: 'ignore' });
      spawned.push(child);
      children.set(port, child);
      killed.delete(port);
      await until(
        `the server on port ${port} to rejoin as a replica in sync`,
        async () => {
          const info = (await onPort(port, (r) => r.info('replication'))) ?? '';
          return info.includes('role:slave') && info.includes('master_link_status:up') ? true : undefined;
        },
        60_000,
        200,
      );
    },
    failover: async (key) => {
      const slot = await slotOf(key);
      const [from, to] = await servers(ports[0] ?? 0, slot);
      if (from === undefined || to === undefined) throw new Error(`slot ${slot} has no replica to fail over to`);
      await onPort(to, (r) => r.cluster('FAILOVER'));
      await until(
        `every node to name the server on port ${to} the master of slot ${slot}`,
        async () => {
          for (const port of ports) if ((await servers(port, slot))[0] !== to) return undefined;
          return true;
        },
        20_000,
        100,
      );
      return { from, to };
    },
  };
}
