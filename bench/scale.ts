// Fleet-scale figures: infra-loadtest against a server of its own at several fleet sizes, both stores, three runs
// each; jobs over the whole fleet (no-op command, quorum 100%). Writes bench/scale-results.json and prints a
// Markdown table of medians with the spread; `node --import tsx bench/scale-chart.ts` draws bench/scale.svg.
//   node --import tsx bench/scale.ts [SIZES] [RUNS]     e.g. bench/scale.ts 1000,5000,10000 3
// The nodes share connections, INFRA_BENCH_NODES_PER_CONNECTION a pair (default 50: past about 9,000 nodes one
// pair each would pass the open-file limit), and the server heartbeats every INFRA_BENCH_HEARTBEAT_MS (default
// 10000, the original's interval). Each run starts INFRA_BENCH_JOBS jobs one after another (default 3) and
// reports their p50: the first job of a fresh process also pays for V8 compiling the job path. The tester's loops
// of signed GETs of the running job (INFRA_BENCH_REST_CONCURRENCY, default 2, as infra-loadtest's own default) load
// the server meanwhile; 0 measures the job path alone.
// Redis runs use INFRA_BENCH_REDIS_URL (default redis://127.0.0.1:6379/13), a database this benchmark empties
// before each run: a spawned server starts there from nothing, as on the file store.
import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, report, SHARED } from './support.js';

const here = dirname(fileURLToPath(import.meta.url));
const stores = (process.env.INFRA_BENCH_STORES ?? 'file,redis').split(',') as Array<'file' | 'redis'>;
const sizes = (process.argv[2] ?? '1000,5000,10000').split(',').map(Number);
const runs = Number(process.argv[3] ?? 3);
const redisUrl = process.env.INFRA_BENCH_REDIS_URL || 'redis://127.0.0.1:6379/13';
const perConnection = Number(process.env.INFRA_BENCH_NODES_PER_CONNECTION ?? 50);
const heartbeatMs = Number(process.env.INFRA_BENCH_HEARTBEAT_MS ?? 10_000);
const jobs = Number(process.env.INFRA_BENCH_JOBS ?? 3);
const restConcurrency = Number(process.env.INFRA_BENCH_REST_CONCURRENCY ?? 2);

export interface ScaleRow {
  store: 'file' | 'redis';
  nodes: number;
  run: number;
  nodes_per_connection: number;
  heartbeat_interval_ms: number;
  /** Loops of signed GETs of the running job (absent in rows from before it was recorded: 2). */
  rest_concurrency?: number;
  rest_get_job_per_s?: number | null;
  provision_s: number;
  ready_s: number;
  commit_to_all_acked_ms: number | null;
  post_to_running_ms: number | null;
  post_to_complete_ms: number | null;
  server_cpu_pct: number | null;
  server_rss_mb: number | null;
  correct: boolean;
}

interface LoadFigures {
  errors?: string[];
  provision_s: number;
  ready_s: number;
  commit_to_all_acked_ms: { p50: number | null };
  post_to_running_ms: { p50: number | null };
  post_to_complete_ms: { p50: number | null };
  server_cpu_pct: number | null;
  server_rss_mb: number | null;
  rest_get_job_per_s: number | null;
  quorum_outcomes_correct: { correct: number; total: number };
}

async function loadtest(store: ScaleRow['store'], nodes: number): Promise<LoadFigures> {
  const args = [join(here, '..', 'dist/src/bin/infra-loadtest.js'), '--spawn', '--nodes', String(nodes), '--json'];
  args.push('--nodes-per-connection', String(perConnection), '--heartbeat-interval', String(heartbeatMs));
  args.push('--jobs', String(jobs), '--rest-concurrency', String(restConcurrency));
  args.push('--timeout', String(Math.max(300, Math.ceil(nodes / 15))));
  if (store === 'redis') {
    const redis = new Redis(redisUrl);
    await redis.flushdb();
    await redis.quit();
    args.push('--redis', redisUrl);
  }
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, timeout: 900_000 });
  const last = r.stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(last) as LoadFigures;
  } catch {
    throw new Error(`infra-loadtest ${args.slice(1).join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  }
}

const rows: ScaleRow[] = [];
for (const store of stores)
  for (const nodes of sizes)
    for (let run = 1; run <= runs; run++) {
      const f = await loadtest(store, nodes);
      if (f.quorum_outcomes_correct === undefined) {
        console.error(`${store} ${nodes} run ${run} failed: ${(f.errors ?? []).join('; ')}`);
        continue;
      }
      const q = f.quorum_outcomes_correct;
      rows.push({
        store,
        nodes,
        run,
        nodes_per_connection: perConnection,
        heartbeat_interval_ms: heartbeatMs,
        rest_concurrency: restConcurrency,
        rest_get_job_per_s: f.rest_get_job_per_s,
        provision_s: f.provision_s,
        ready_s: f.ready_s,
        commit_to_all_acked_ms: f.commit_to_all_acked_ms.p50,
        post_to_running_ms: f.post_to_running_ms.p50,
        post_to_complete_ms: f.post_to_complete_ms.p50,
        server_cpu_pct: f.server_cpu_pct,
        server_rss_mb: f.server_rss_mb,
        correct: q.correct === q.total,
      });
      console.error(`${store} ${nodes} run ${run}: ${JSON.stringify(rows.at(-1))}`);
    }
// Rows of other stores and sizes from earlier runs are kept, so the stores can be measured one at a time.
const file = join(here, 'scale-results.json');
const earlier = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as ScaleRow[]) : [];
const sameSeries = (a: ScaleRow, b: ScaleRow) =>
  a.store === b.store && a.nodes === b.nodes && (a.rest_concurrency ?? 2) === (b.rest_concurrency ?? 2);
const kept = earlier.filter((r) => !rows.some((n) => sameSeries(n, r)));
writeFileSync(file, `${JSON.stringify([...kept, ...rows], null, 1)}\n`);

const cell = (values: Array<number | null>): string => {
  const v = values.filter((x): x is number => x !== null).sort((a, b) => a - b);
  return v.length === 0 ? 'n/a' : `${Math.round(median(v))} (${Math.round(v[0] ?? 0)}–${Math.round(v.at(-1) ?? 0)})`;
};
console.log(
  '| store | nodes | provisioned and connected s | commit to all acked ms | POST to running ms | POST to complete ms | server CPU % | RSS MB | GETs of the job /s | correct |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
for (const store of stores)
  for (const nodes of sizes) {
    const rs = rows.filter((r) => r.store === store && r.nodes === nodes);
    const col = (k: keyof ScaleRow) => cell(rs.map((r) => r[k] as number | null));
    console.log(
      `| ${store} | ${nodes} | ${col('provision_s')} | ${col('commit_to_all_acked_ms')} | ${col('post_to_running_ms')} | ${col('post_to_complete_ms')} | ${col('server_cpu_pct')} | ${col('server_rss_mb')} | ${col('rest_get_job_per_s')} | ${rs.every((r) => r.correct) ? 'all' : 'NOT ALL'} |`,
    );
    const fleet = `${nodes} nodes, ${store}, ${perConnection} a connection, ${heartbeatMs / 1000} s heartbeat`;
    report(`${fleet}: commit to all acked p50, ms`, col('commit_to_all_acked_ms'), { setup: SHARED });
    report(`${fleet}: POST to complete p50, ms`, col('post_to_complete_ms'), { setup: SHARED });
  }
