// The job list with 100,000 stored jobs (INFRA_BENCH_JOBS): server start-up time, and the latency of signed
// GET /pushy/jobs pages (newest 50, and a page deep in the list) and of one old job. Target: p99 <= 50 ms.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeJob } from '../actors/push/job-store.js';
import { ApiClient } from '../src/auth/api-client.js';
import { jobsCollection } from '../src/store/collections.js';
import { FileStore } from '../src/store/file-store.js';
import { median, report, startServer, target, teardowns } from './support.js';

const JOBS = Number(process.env.INFRA_BENCH_JOBS ?? 100_000);
const REQUESTS = 500;
const ORG = 'default';

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

async function stopAll(): Promise<void> {
  for (const fn of teardowns.splice(0).reverse()) await fn();
}

/** Finished jobs, oldest first, written as the server writes them (headers in batches; nodes of the oldest only). */
async function seed(dataDir: string): Promise<void> {
  const store = new FileStore(join(dataDir, 'store'));
  const at = Date.now() - 86_400_000;
  const header = (i: number) => ({
    id: jobId(i),
    command: 'chef-client',
    options: {},
    run_timeout: 3600,
    voting_timeout: 60,
    quorum: 1,
    status: 'complete' as const,
    created_at: at + i,
    updated_at: at + i,
    voting_deadline: null,
    run_deadline: null,
  });
  await writeJob(store, ORG, jobId(0), {
    header: header(0),
    nodes: [['node-0', { status: 'succeeded', at, exit_status: 0 }]],
    outputs: [],
  });
  for (let from = 1; from < JOBS; from += 5000) {
    const batch = Array.from({ length: Math.min(5000, JOBS - from) }, (_, k) => header(from + k));
    await store.putMany(
      jobsCollection(ORG),
      batch.map((h) => [h.id, h] as const),
    );
  }
  await store.close();
}

const jobId = (i: number): string => i.toString(16).padStart(32, '0');

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-bench-jobs-'));
  try {
    const first = await startServer(dir); // first start writes the organization and the keys
    await stopAll();
    const seeded = Date.now();
    await seed(first.dataDir);
    const seedS = (Date.now() - seeded) / 1000;
    const starting = Date.now();
    const { url, dataDir } = await startServer(dir, {}, 600_000);
    const startS = (Date.now() - starting) / 1000;
    const admin = new ApiClient({
      baseUrl: url,
      userId: 'admin',
      key: await readFile(join(dataDir, 'admin.pem'), 'utf8'),
    });
    console.log(`${JOBS} jobs: written in ${seedS.toFixed(1)} s, server up in ${startS.toFixed(1)} s\n`);
    console.log('| request | requests | p50 ms | p99 ms | max ms |');
    console.log('|---|---:|---:|---:|---:|');
    const oldest = jobId(0);
    for (const [label, path] of [
      ['GET jobs?limit=50 (newest page)', `/organizations/${ORG}/pushy/jobs?limit=50`],
      ['GET jobs?offset=90000&limit=50', `/organizations/${ORG}/pushy/jobs?offset=${Math.floor(JOBS * 0.9)}&limit=50`],
      ['GET one old job (from the store)', `/organizations/${ORG}/pushy/jobs/${oldest}`],
    ] as const) {
      const ms: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        const started = process.hrtime.bigint();
        const res = await admin.send('GET', path);
        if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
        ms.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      ms.sort((a, b) => a - b);
      const row = [median(ms), percentile(ms, 99), ms.at(-1) ?? NaN].map((v) => v.toFixed(2));
      console.log(`| ${label} | ${REQUESTS} | ${row.join(' | ')} |`);
      const p99 = percentile(ms, 99);
      report(`${JOBS} jobs: ${label}, p99`, `${p99.toFixed(2)} ms`, { target: target('≤ 50 ms', p99 <= 50) });
    }
    const all = Date.now();
    const res = await admin.send('GET', `/organizations/${ORG}/pushy/jobs`);
    console.log(`\nGET jobs unpaged (${res.bytes.length} bytes): ${Date.now() - all} ms`);
    report(`server start on a file store of ${JOBS} jobs`, `${startS.toFixed(1)} s`);
  } finally {
    await stopAll();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
