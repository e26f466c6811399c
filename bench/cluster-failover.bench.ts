// kill -9 of the process that owns an organization, in a cluster of three server processes on one Redis, while a job
// over 1,000 simulated nodes (infra-loadtest, one connection pair per node, 1 s heartbeat) runs a command: how long
// until another process serves the organization again, and how many of the nodes' results the job still gets.
// The settings are the defaults (lease_ttl 5 s). INFRA_BENCH_NODES sets the fleet.
import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { JobBody } from '../src/api/push-jobs.js';
import { isFinished } from '../src/push/job-states.js';
import { serverStatusSchema } from '../src/api/status-schema.js';
import { ApiClient } from '../src/auth/api-client.js';
import { preferredOwner } from '../src/cluster/ownership.js';
import { partitionName, partitionOf } from '../src/store/partitions.js';
import { until } from '../test/support/deadline.js';
import { freePort } from '../test/support/server-process.js';
import { report, runInTempDir, scope, SHARED, spawnTester, startServer, target } from './support.js';

const NODES = Number(process.env.INFRA_BENCH_NODES ?? 1000);
const RUN_MS = 20_000;
const PARTITION = partitionName(partitionOf('default'));

async function membership(url: string): Promise<{ member: string; held: string[] } | undefined> {
  const answer = await fetch(`${url}/_status`).catch(() => undefined);
  if (!answer) return undefined;
  return serverStatusSchema.parse(await answer.json()).cluster;
}

const held = async (url: string) => (await membership(url))?.held;

runInTempDir('infra-bench-failover-', async (dir) => {
  const redisPort = await freePort();
  const redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', ''], {
    stdio: 'ignore',
  });
  // The probe below connects before the server listens: its refusals are expected.
  const quiet = () => undefined;
  scope.teardown(() => redis.kill('SIGKILL'));
  const dataDir = join(dir, 'data');
  const settings = { redis_url: `redis://127.0.0.1:${redisPort}`, data_dir: dataDir };
  const probe = new Redis(redisPort, '127.0.0.1', { maxRetriesPerRequest: null });
  probe.on('error', quiet);
  await until('redis-server', async () => ((await probe.ping()) === 'PONG' ? true : undefined), 10_000);
  probe.disconnect();
  const servers = await Promise.all(
    [0, 1, 2].map(async (i) => {
      const own = join(dir, `s${i}`);
      await mkdir(own, { recursive: true });
      return startServer(own, settings, 60_000);
    }),
  );
  // Settled: the partitions shared by all three, the organization's with the member it belongs to among them
  // (until then it may still move, and the tester's server must not be the one killed).
  const ownerNow = () =>
    until(
      'the server the default organization belongs to among all three to own it',
      async () => {
        const all = await Promise.all(servers.map((s) => membership(s.url)));
        if (all.some((m) => !m?.held.length) || all.reduce((n, m) => n + (m?.held.length ?? 0), 0) !== 65)
          return undefined;
        const due = preferredOwner(
          partitionOf('default'),
          all.map((m) => m?.member ?? ''),
        );
        const at = all.findIndex((m) => m !== undefined && m.member === due && m.held.includes(PARTITION));
        return at >= 0 ? servers[at] : undefined;
      },
      60_000,
    );
  const first = await ownerNow();
  const entry = servers.find((s) => s !== first) ?? first;
  const keyFile = join(dataDir, 'admin.pem');
  const admin = new ApiClient({ baseUrl: entry.url, userId: 'admin', key: await readFile(keyFile, 'utf8') });
  const tester = spawnTester([
    ...['--server', entry.url, '--key', keyFile, '--nodes', String(NODES), '--jobs', '1'],
    ...['--run-ms', String(RUN_MS), '--run-timeout', '300', '--timeout', '600', '--json'],
  ]);
  const jobPath = (id: string) => `/organizations/default/pushy/jobs/${id}`;
  const job = await until(
    'a job with every node running',
    async () => {
      const list = (await admin.request('GET', '/organizations/default/pushy/jobs')).body as JobBody[];
      const id = list[0]?.id;
      if (id === undefined) return undefined;
      const j = (await admin.request('GET', jobPath(id))).body as JobBody;
      return (j.nodes.running?.length ?? 0) === NODES ? j : undefined;
    },
    600_000,
    200,
  );
  const owner = await ownerNow();
  if (owner === entry) throw new Error('the organization moved to the server the tester talks to');
  process.kill(owner.pid, 'SIGKILL');
  const killedAt = Date.now();
  const survivors = servers.filter((s) => s !== owner);
  await until(
    'another server to own it',
    async () => {
      for (const s of survivors) if ((await held(s.url))?.includes(PARTITION)) return true;
      return undefined;
    },
    60_000,
    50,
  );
  const servedS = (Date.now() - killedAt) / 1000;
  const final = await until(
    'the job to end',
    async () => {
      const answer = await admin.request('GET', jobPath(job.id)).catch(() => undefined);
      const j = answer?.status === 200 ? (answer.body as JobBody) : undefined;
      return j && isFinished(j.status) ? j : undefined;
    },
    600_000,
    500,
  );
  const counts = Object.fromEntries(Object.entries(final.nodes).map(([s, names]) => [s, names.length]));
  const succeeded = counts.succeeded ?? 0;
  console.log(
    `${NODES} nodes running a ${RUN_MS / 1000} s command; the owner of the organization killed with -9 (3 processes)\n`,
  );
  console.log('| served again after | job status | nodes succeeded | replies lost | nodes by status | ended after |');
  console.log('|---:|---|---:|---:|---|---:|');
  console.log(
    `| ${servedS.toFixed(1)} s | ${final.status} | ${succeeded} | ${NODES - succeeded} | ${JSON.stringify(counts)} | ${((Date.now() - killedAt) / 1000).toFixed(1)} s |`,
  );
  console.log(`\ninfra-loadtest: ${await tester.lastLine()}`);
  const setup = SHARED;
  report(`kill -9 of the owner during a ${NODES}-node job (3 processes): served again`, `${servedS.toFixed(1)} s`, {
    target: target('≤ 7 s', servedS <= 7),
    setup,
  });
  report('the same: replies lost', `${NODES - succeeded} of ${NODES}; job ${final.status}`, {
    target: target('0 lost', succeeded === NODES),
    setup,
  });
});
