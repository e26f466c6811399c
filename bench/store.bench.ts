// Store write costs: one document put (p50/p99 µs), a putMany of 1,000 documents, and 10,000 puts of distinct
// documents 64 at a time (as a fleet registering writes clients, nodes and session keys), for both stores.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '../src/store/file-store.js';
import { holdEveryPartition } from '../src/cluster/leases.js';
import { RedisStore } from '../src/store/redis-store.js';
import type { Store } from '../src/store/store.js';
import { report as reportResult } from './support.js';

const PUT_BUDGET_MS = 4000;
const PUT_MAX = 20_000;
const BATCH_BUDGET_MS = 4000;
const BATCH_MAX = 50;
const BATCH_SIZE = 1000;

/** About the size of one node's saved state. */
function nodeState(i: number): unknown {
  return {
    name: `node-${i}.example.com`,
    status: 'online',
    availability: 'available',
    incarnation_id: '6f1d1b1c-6a43-4f39-9d5e-1f3b8b7e2a11',
    heartbeat_at: 1_700_000_000_000 + i,
    rehab: false,
    jobs: [],
  };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

function microseconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1000;
}

async function benchPut(store: Store): Promise<number[]> {
  const costs: number[] = [];
  const until = Date.now() + PUT_BUDGET_MS;
  for (let i = 0; i < PUT_MAX && Date.now() < until; i += 1) {
    const start = process.hrtime.bigint();
    await store.put('bench/nodes', `node-${i % 1000}`, nodeState(i));
    costs.push(microseconds(start));
  }
  return costs.sort((a, b) => a - b);
}

async function benchPutMany(store: Store): Promise<number[]> {
  const costs: number[] = [];
  const until = Date.now() + BATCH_BUDGET_MS;
  for (let round = 0; round < BATCH_MAX && Date.now() < until; round += 1) {
    const docs = Array.from(
      { length: BATCH_SIZE },
      (_, i) => [`node-${i}`, nodeState(round * BATCH_SIZE + i)] as const,
    );
    const start = process.hrtime.bigint();
    await store.putMany('bench/states', docs);
    costs.push(microseconds(start));
  }
  return costs.sort((a, b) => a - b);
}

const CONCURRENT_PUTS = 10_000;
const IN_FLIGHT = 64;

/** Documents a second, and each put's time from call to settle (µs, sorted). */
async function benchConcurrentPuts(store: Store): Promise<{ perSecond: number; costs: number[] }> {
  const costs: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  const lane = async () => {
    for (let i = next++; i < CONCURRENT_PUTS; i = next++) {
      const start = process.hrtime.bigint();
      await store.put('bench/fleet', `node-${i}`, nodeState(i));
      costs.push(microseconds(start));
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  const seconds = microseconds(started) / 1e6;
  return { perSecond: CONCURRENT_PUTS / seconds, costs: costs.sort((a, b) => a - b) };
}

async function report(kind: string, store: Store): Promise<void> {
  const puts = await benchPut(store);
  console.log(
    `| ${kind} | put one document | ${puts.length} | ${percentile(puts, 50).toFixed(0)} µs | ${percentile(puts, 99).toFixed(0)} µs |`,
  );
  const batches = await benchPutMany(store);
  const p50 = (percentile(batches, 50) / 1000).toFixed(1);
  const p99 = (percentile(batches, 99) / 1000).toFixed(1);
  console.log(`| ${kind} | putMany of ${BATCH_SIZE} documents | ${batches.length} | ${p50} ms | ${p99} ms |`);
  const fleet = await benchConcurrentPuts(store);
  console.log(
    `| ${kind} | ${CONCURRENT_PUTS} puts, ${IN_FLIGHT} in flight: ${fleet.perSecond.toFixed(0)} a second | ${fleet.costs.length} | ${percentile(fleet.costs, 50).toFixed(0)} µs | ${percentile(fleet.costs, 99).toFixed(0)} µs |`,
  );
  const p = (xs: number[], n: number) => percentile(xs, n).toFixed(0);
  reportResult(`${kind} store: put one document, p50 / p99`, `${p(puts, 50)} / ${p(puts, 99)} µs`);
  reportResult(
    `${kind} store: putMany of ${BATCH_SIZE}, p50; ${IN_FLIGHT} puts in flight`,
    `${p50} ms; ${fleet.perSecond.toFixed(0)} documents/s`,
  );
}

console.log('| store | operation | samples | p50 | p99 |');
console.log('|---|---|---|---|---|');

const dir = await mkdtemp(join(tmpdir(), 'store-bench-'));
try {
  const files = new FileStore(dir);
  await report('file', files);
  await files.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}

const url = process.env.TEST_REDIS_URL || process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const prefix = `bench:${process.pid}:`;
const redis = await RedisStore.connect(url, prefix, 2000).catch((err: unknown) => {
  console.log(`| redis | skipped: ${err instanceof Error ? err.message : String(err)} | | | |`);
  return undefined;
});
if (redis) {
  // Every write is fenced by a partition lease, as a server's are: this process holds them all.
  const leases = await holdEveryPartition(redis);
  try {
    await report('redis', redis);
  } finally {
    await redis.drop('bench');
    await leases.stop(true);
    await redis.close();
  }
}
