// Two server processes through Sentinel (a master, two replicas, one sentinel, all on loopback) while both create
// nodes without pause: the master is failed over, once by SENTINEL FAILOVER and once by kill -9. Figures: how long
// no write was answered 201, how many were refused (503) and how many answered otherwise, every write answered 201
// that the new master does not hold (the target: none), and how long a job started right after took to complete.
import type { ApiClient } from '../src/auth/api-client.js';
import { collectionKey } from '../src/store/layout.js';
import { partitionOfDoc } from '../src/store/partitions.js';
import { everyPartitionServed, fleet, jobEnd, keepCreating, startCluster, startJob } from '../test/support/cluster.js';
import { until } from '../test/support/deadline.js';
import { onPort } from '../test/support/redis-probe.js';
import { startRedisSentinel } from '../test/support/redis-sentinel.js';
import { report, scope, target, teardowns } from './support.js';

const NODES = 'org/default/nodes';
/** Writes answered 201 before the failover, and after it, that the run waits for. */
const WRITES_AROUND = 30;

interface Round {
  how: 'SENTINEL FAILOVER' | 'kill -9 of the master';
  answered: number;
  refused: number;
  otherwise: number;
  lost: number;
  /** The longest time no write was answered 201, around the failover (ms). */
  gapMs: number;
  /** POST to complete of a job over two real nodes started once every partition is served again (ms). */
  jobMs: number;
  jobStatus: string;
}

async function round(how: Round['how'], index: number): Promise<Round> {
  const redis = await startRedisSentinel(scope);
  const c = await startCluster(scope, 2, redis.url);
  const served = everyPartitionServed(c);
  await until('every partition to be served', served, 30_000);
  const [first, second] = c.servers as [(typeof c.servers)[0], (typeof c.servers)[0]];
  const nodes = await fleet(scope, c, first, [`b${index}-1`, `b${index}-2`]);
  const admins: ApiClient[] = [await c.admin(first), await c.admin(second)];
  const writes = keepCreating(admins, `w${index}-`);
  await writes.more(WRITES_AROUND);
  const { to } = how === 'SENTINEL FAILOVER' ? await redis.failover() : await redis.killMaster();
  await writes.more(WRITES_AROUND);
  await writes.stop();
  const answered = writes.answered;
  const refused = writes.refused.filter((r) => r === '503').length;
  const otherwise = writes.refused.length - refused;
  const key = collectionKey('infra:', partitionOfDoc(NODES, 'any'), NODES);
  const held = new Set((await onPort(to, (r) => r.hkeys(key))) ?? []);
  const lost = answered.filter((w) => !held.has(w.name)).length;
  let gapMs = 0;
  for (let i = 1; i < answered.length; i++)
    gapMs = Math.max(gapMs, (answered[i]?.at ?? 0) - (answered[i - 1]?.at ?? 0));
  await until('both processes to serve every partition', served, 30_000);
  const started = Date.now();
  const job = await jobEnd(
    admins[1] as ApiClient,
    await startJob(admins[0] as ApiClient, 'hello', [`b${index}-1`, `b${index}-2`]),
    60_000,
  );
  const jobMs = Date.now() - started;
  for (const n of nodes) await n.stop();
  return { how, answered: answered.length, refused, otherwise, lost, gapMs, jobMs, jobStatus: job.status };
}

async function main(): Promise<void> {
  try {
    const rounds: Round[] = [];
    for (const [i, how] of (['SENTINEL FAILOVER', 'kill -9 of the master'] as const).entries()) {
      rounds.push(await round(how, i));
      for (const fn of teardowns.splice(0).reverse()) await fn();
    }
    console.log('| how | answered 201 | refused 503 | answered otherwise | 201 lost | longest gap | job after |');
    console.log('|---|---:|---:|---:|---:|---:|---|');
    for (const r of rounds) {
      const job = `${r.jobStatus} in ${r.jobMs} ms`;
      console.log(`| ${r.how} | ${r.answered} | ${r.refused} | ${r.otherwise} | ${r.lost} | ${r.gapMs} ms | ${job} |`);
    }
    for (const r of rounds) {
      report(`Sentinel, ${r.how}: writes answered 201 and lost`, `${r.lost} of ${r.answered}`, {
        target: target('0', r.lost === 0),
      });
      report(
        `the same: longest time without a 201; refused, otherwise`,
        `${(r.gapMs / 1000).toFixed(1)} s; ${r.refused} refused (503), ${r.otherwise} otherwise`,
        { target: target('none otherwise', r.otherwise === 0) },
      );
      report('the same: a job started once every partition is served again', `${r.jobStatus} in ${r.jobMs} ms`, {
        target: target('complete', r.jobStatus === 'complete'),
      });
    }
  } finally {
    for (const fn of teardowns.splice(0).reverse()) await fn();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
