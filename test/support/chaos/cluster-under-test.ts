// The cluster a chaos run drives: N infra-server members on one Redis (started together on a shared data_dir), the
// balancer in front of their API ports or none, real push-jobs-client nodes pointed at the balancer or each at one
// member, and the nemesis's faults of a member: kill -9 and start again on the same folder and ports, SIGSTOP and
// SIGCONT. Redis's own faults are redis-under-test.ts's.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serverStatusSchema, type ServerStatusBody } from '../../../src/api/status-schema.js';
import { ApiClient } from '../../../src/auth/api-client.js';
import { partitionName, partitionOf } from '../../../src/store/partitions.js';
import { until } from '../deadline.js';
import { startServerProcess, type ServerProcess } from '../server-process.js';
import type { TeardownScope } from '../teardown-scope.js';
import { startBalancer } from './balancer.js';
import { startClientFleet, startSimulatedFleet, type FleetUnderTest } from './fleets.js';
import type { RedisKind } from './history.js';
import type { Fault } from './nemesis.js';
import { startRedisUnderTest, type FaultDone, type RedisUnderTest } from './redis-under-test.js';

export const DEFAULT_PARTITION = partitionName(partitionOf('default'));

export interface ClusterOptions {
  /** The run's folder: the shared data_dir, the nodes' folders, the members' logs. */
  dir: string;
  members: number;
  nodes: number;
  redis: RedisKind;
  balancer: boolean;
  leaseTtlS: number;
  heartbeatMs: number;
  /** client.rb's whitelist of every node. */
  whitelist: Record<string, string>;
  /** Simulated nodes (infra-loadtest) instead of real clients, every command running `runMs`. */
  simulated?: { runMs: number };
  /** The members' and the clients' log level (info by default): debug to follow one node's messages. */
  logLevel?: 'debug' | 'info';
}

export interface Member {
  index: number;
  url: string;
  state: 'up' | 'killed' | 'paused';
  /** The process now (a new one after each kill). */
  server: ServerProcess;
  /** Output of the processes killed before this one. */
  earlier: string[];
}

export interface ClusterUnderTest {
  members: Member[];
  nodes: FleetUnderTest;
  redis: RedisUnderTest;
  /** The balancer's URL, or null without one. */
  balancerUrl: string | null;
  dataDir: string;
  /** admin's client against `url`; requests give up after `timeoutMs`. */
  admin(url: string, timeoutMs?: number): Promise<ApiClient>;
  /** A member's GET /_status, or undefined past `timeoutMs` (a frozen member answers nothing). */
  status(m: Member, timeoutMs?: number): Promise<ServerStatusBody | undefined>;
  /** Applies a fault; answers when it struck, what it hit, and when Redis took writes again where it tells. */
  apply(f: Fault): Promise<FaultDone>;
  heal(f: Fault): Promise<string>;
  /** Every member's output, the killed processes' first, written to `<dir>/member-<i>.log`. */
  saveOutputs(): Promise<string[]>;
}

/** How often a member's restart is tried: a port freed by the kill may be taken meanwhile by another program. */
const RESTART_ATTEMPTS = 3;

export async function startClusterUnderTest(scope: TeardownScope, o: ClusterOptions): Promise<ClusterUnderTest> {
  const redis = await startRedisUnderTest(scope, o.redis);
  const dataDir = join(o.dir, 'data');
  const settings = {
    redis_url: redis.url,
    data_dir: dataDir,
    lease_ttl: o.leaseTtlS,
    heartbeat_interval: o.heartbeatMs,
    server_name: '127.0.0.1',
    queue_listen_address: 'tcp://127.0.0.1',
    log_level: o.logLevel ?? 'info',
  };
  // Started together: one sets the cluster up (its keys land in the shared data_dir), the others wait for it.
  const servers = await Promise.all(
    Array.from({ length: o.members }, () => startServerProcess(scope, { settings, startTimeoutMs: 60_000 })),
  );
  const members: Member[] = servers.map((server, index) => ({
    index,
    url: server.url,
    state: 'up',
    server,
    earlier: [],
  }));
  // A member left frozen by a run cut short would wait out its stop's grace to be killed; woken, it stops at once.
  scope.teardown(() => {
    for (const m of members) if (m.state === 'paused') process.kill(m.server.pid, 'SIGCONT');
  });
  const keys = new Map<string, string>();
  const keyOf = async (user: string) => {
    const key = keys.get(user) ?? (await readFile(join(dataDir, `${user}.pem`), 'utf8'));
    keys.set(user, key);
    return key;
  };
  const admin = async (url: string, timeoutMs = 3000) =>
    new ApiClient({ baseUrl: url, userId: 'admin', key: await keyOf('admin'), timeoutMs });
  const status = async (m: Member, timeoutMs = 1000) => {
    const answer = await fetch(`${m.url}/_status`, { signal: AbortSignal.timeout(timeoutMs) }).catch(() => undefined);
    const body: unknown = await answer?.json().catch(() => undefined);
    const parsed = serverStatusSchema.safeParse(body);
    return parsed.success ? parsed.data : undefined;
  };
  await until(
    'every partition to be served, each member counting all of them',
    async () => {
      const all = await Promise.all(members.map((m) => status(m, 5000)));
      const held = all.reduce((n, s) => n + (s?.cluster?.partitions ?? 0), 0);
      return held === 65 && all.every((s) => s?.cluster?.members.length === o.members) ? true : undefined;
    },
    60_000,
    200,
  );
  const balancer = o.balancer ? await startBalancer(scope, () => members.map((m) => m.server.ports.api)) : null;
  const entry = balancer?.url ?? (members[0] as Member).url;
  const fleet =
    o.simulated === undefined
      ? await startClientFleet(scope, {
          // Without a balancer each node knows one member, as a client.rb naming one host does.
          serverUrl: (i) => balancer?.url ?? (members[i % members.length] as Member).url,
          validationKey: join(dataDir, 'default-validator.pem'),
          dir: join(o.dir, 'nodes'),
          count: o.nodes,
          whitelist: o.whitelist,
          admin: await admin(entry, 10_000),
          ...(o.logLevel === undefined ? {} : { logLevel: o.logLevel }),
        })
      : await startSimulatedFleet(scope, {
          serverUrl: entry,
          keyFile: join(dataDir, 'admin.pem'),
          dir: join(o.dir, 'nodes'),
          count: o.nodes,
          runMs: o.simulated.runMs,
          admin: await admin(entry, 30_000),
        });

  /** The member each round's fault hit, for its healing. */
  const hit = new Map<number, Member>();
  /** The member of the fault's rank now: the default organization's server first, then the others in order. */
  const rankedTarget = async (f: Fault): Promise<Member> => {
    const held = await Promise.all(
      members.map(async (m) => m.state === 'up' && (await status(m))?.cluster?.held.includes(DEFAULT_PARTITION)),
    );
    const owner = members.find((_, i) => held[i]);
    const ranked = owner === undefined ? members : [owner, ...members.filter((m) => m !== owner)];
    const m = f.target === null ? undefined : ranked[f.target];
    if (m === undefined) throw new Error(`fault ${f.kind} of round ${f.round} names no member`);
    hit.set(f.round, m);
    return m;
  };
  const memberOf = (f: Fault): Member => {
    const m = hit.get(f.round);
    if (m === undefined) throw new Error(`fault ${f.kind} of round ${f.round} was never applied`);
    return m;
  };
  /** What a member was when hit: its pid, what it served, how many nodes it heard. */
  const describe = async (m: Member) => {
    const s = await status(m);
    const held = s?.cluster?.held ?? [];
    const owner = held.includes(DEFAULT_PARTITION) ? ', owner of the default organization' : '';
    return `m${m.index} (pid ${m.server.pid}, ${held.length} partitions${owner}, nodes connected: ${s?.push_jobs?.connected_nodes ?? '?'})`;
  };
  return {
    members,
    nodes: fleet,
    redis,
    balancerUrl: balancer?.url ?? null,
    dataDir,
    admin,
    status,
    apply: async (f) => {
      if (f.kind === 'kill') {
        const m = await rankedTarget(f);
        const detail = await describe(m);
        const at = Date.now();
        process.kill(m.server.pid, 'SIGKILL');
        m.state = 'killed';
        await m.server.stop(); // resolves once the killed process has exited
        return { at, member: m.index, detail: `${detail} killed (-9)` };
      }
      if (f.kind === 'pause') {
        const m = await rankedTarget(f);
        const detail = await describe(m);
        const at = Date.now();
        process.kill(m.server.pid, 'SIGSTOP');
        m.state = 'paused';
        return { at, member: m.index, detail: `${detail} stopped (SIGSTOP)` };
      }
      return redis.apply(f);
    },
    heal: async (f) => {
      if (f.kind === 'kill') {
        const m = memberOf(f);
        m.earlier.push(m.server.output());
        for (let attempt = 1; ; attempt++) {
          try {
            m.server = await m.server.restart();
            break;
          } catch (e) {
            if (attempt === RESTART_ATTEMPTS) throw e;
          }
        }
        m.state = 'up';
        return `m${m.index} started again (pid ${m.server.pid}) on its folder and ports`;
      }
      if (f.kind === 'pause') {
        const m = memberOf(f);
        process.kill(m.server.pid, 'SIGCONT');
        m.state = 'up';
        return `m${m.index} continued (SIGCONT)`;
      }
      return redis.heal(f);
    },
    saveOutputs: async () => {
      const files: string[] = [];
      for (const m of members) {
        const file = join(o.dir, `member-${m.index}.log`);
        await writeFile(file, [...m.earlier, m.server.output()].join('\n--- killed (-9), started again ---\n'));
        files.push(file);
      }
      return files;
    },
  };
}
