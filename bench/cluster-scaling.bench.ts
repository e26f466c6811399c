// One organization's fleet over 1, 2, ... server processes on one Redis (node gateways): heartbeats each process
// handles, its CPU per heartbeat, Redis commands per heartbeat, and three jobs over every node, at the defaults real
// clients run (one connection pair per node, 1 s heartbeat). Each count of processes runs `infra-loadtest --spawn
// --processes N` twice: heartbeats only, then jobs.
//
// INFRA_BENCH_NODES (2,000), INFRA_BENCH_PROCESSES (`1,2`), INFRA_BENCH_SECONDS (30); INFRA_BENCH_NODES_PER_PROCESS
// instead gives each count of processes that many nodes apiece, so that each process carries the same load whatever
// their number. Each run has a private redis-server of its own (an empty store, and its INFO commandstats counting
// this run alone). On a machine where the load tester shares the cores with the servers, the figures per process
// (CPU a heartbeat, heartbeats each) are what scale; the totals say what this machine did. The scaling column
// computes from them what N processes with cores of their own would handle, as a multiple of what the first count
// handles per process: N × (the first count's CPU a heartbeat ÷ this count's).
import { z } from 'zod';
import { startPrivateRedis } from '../test/support/private-redis.js';
import { report, runInTempDir, scope, SHARED, spawnTester, target } from './support.js';

const NODES = Number(process.env['INFRA_BENCH_NODES'] ?? 2000);
const NODES_PER_PROCESS = Number(process.env['INFRA_BENCH_NODES_PER_PROCESS'] ?? 0);
/** The fleet for `processes` processes. */
const fleetFor = (processes: number) => (NODES_PER_PROCESS > 0 ? NODES_PER_PROCESS * processes : NODES);
const PROCESSES = (process.env['INFRA_BENCH_PROCESSES'] ?? '1,2').split(',').map(Number);
const SECONDS = Number(process.env['INFRA_BENCH_SECONDS'] ?? 30);

const figures = z.object({
  processes: z.array(z.object({ cpu_pct: z.number().nullable(), heartbeats: z.number().nullable() })),
  processed_hb_per_s: z.number().nullable(),
  redis_ops_per_heartbeat: z.number().nullable(),
  commit_to_all_acked_ms: z.object({ p50: z.number().nullable() }),
  post_to_complete_ms: z.object({ p50: z.number().nullable() }),
  jobs_by_status: z.record(z.string(), z.number()),
  dropped: z.number(),
});
type Figures = z.infer<typeof figures>;

async function loadtest(processes: number, extra: readonly string[]): Promise<Figures> {
  const redis = await startPrivateRedis(scope);
  const tester = spawnTester([
    ...['--spawn', '--redis', redis.url, '--nodes', String(fleetFor(processes)), '--processes', String(processes)],
    ...['--json', ...extra],
  ]);
  const line = (await tester.output()).trim().split('\n').at(-1) ?? '';
  try {
    return figures.parse(JSON.parse(line));
  } catch {
    throw new Error(`infra-loadtest --processes ${processes} gave no figures: ${line.slice(0, 400)}`);
  } finally {
    await redis.kill();
  }
}

const cell = (n: number | null | undefined, unit = '') => (n === null || n === undefined ? 'n/a' : `${n}${unit}`);

runInTempDir('cluster-scaling-', async () => {
  const fleet = NODES_PER_PROCESS > 0 ? `${NODES_PER_PROCESS} nodes a process` : `${NODES} nodes`;
  console.log(
    `${fleet}, one connection pair each, 1 s heartbeat; ${SECONDS} s of heartbeats, then 3 jobs over every node\n`,
  );
  console.log(
    '| processes | nodes | heartbeats/s handled | each process: heartbeats/s, CPU | CPU ms a heartbeat | computed scaling | Redis commands a heartbeat | commit to all acked p50 | POST to complete p50 | jobs |',
  );
  console.log('| --: | --: | --: | --- | --: | --: | --: | --: | --: | --- |');
  let firstPerBeat: { n: number; ms: number } | undefined;
  for (const n of PROCESSES) {
    const beats = await loadtest(n, ['--heartbeat-only', '--seconds', String(SECONDS)]);
    const jobs = await loadtest(n, ['--jobs', '3']);
    const each = beats.processes
      .map((p) => `${Math.round((p.heartbeats ?? 0) / SECONDS)}/s ${cell(p.cpu_pct, '%')}`)
      .join(', ');
    const cpu = beats.processes.reduce((s, p) => s + (p.cpu_pct ?? 0), 0);
    const perBeat = beats.processed_hb_per_s ? ((cpu / 100) * 1000) / beats.processed_hb_per_s : null;
    if (perBeat !== null) firstPerBeat ??= { n, ms: perBeat };
    const scaling =
      perBeat === null || firstPerBeat === undefined ? null : (n * firstPerBeat.ms) / firstPerBeat.n / perBeat;
    console.log(
      `| ${n} | ${fleetFor(n)} | ${cell(beats.processed_hb_per_s)} | ${each} | ${cell(perBeat === null ? null : Math.round(perBeat * 1000) / 1000)} | ${scaling === null ? 'n/a' : `${scaling.toFixed(2)} ×`} | ${cell(beats.redis_ops_per_heartbeat)} | ${cell(jobs.commit_to_all_acked_ms.p50, ' ms')} | ${cell(jobs.post_to_complete_ms.p50, ' ms')} | ${JSON.stringify(jobs.jobs_by_status)}, ${jobs.dropped} dropped |`,
    );
    const fleet = `${fleetFor(n)} nodes, ${n} process${n === 1 ? '' : 'es'}`;
    const redisOps = beats.redis_ops_per_heartbeat;
    report(
      `${fleet}: heartbeats handled, CPU ms a heartbeat`,
      `${cell(beats.processed_hb_per_s)}/s, ${perBeat === null ? 'n/a' : perBeat.toFixed(3)} ms`,
      { setup: SHARED },
    );
    if (scaling !== null && n > 1)
      report(
        `${fleet}: heartbeats handled with cores of their own, computed`,
        `${scaling.toFixed(2)} × one process's`,
        {
          target: target(`≥ ${(0.85 * n).toFixed(2)} ×`, scaling >= 0.85 * n),
          setup: SHARED,
        },
      );
    report(`${fleet}: Redis commands a heartbeat`, cell(redisOps), {
      ...(redisOps === null ? {} : { target: target('≤ 0.01', redisOps <= 0.01) }),
      setup: SHARED,
    });
    report(
      `${fleet}: commit to all acked, POST to complete p50`,
      `${cell(jobs.commit_to_all_acked_ms.p50, ' ms')}, ${cell(jobs.post_to_complete_ms.p50, ' ms')}`,
      { setup: SHARED },
    );
  }
});
