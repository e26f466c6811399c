// The time between a rollout's waves over 1,000 simulated nodes: infra-loadtest --spawn runs one job in ten waves
// of 100 (--waves 10%), once with no pause and once with a 2 s pause. A gap runs from the last result a node of one
// wave sent to the first commit a node of the next wave received (between_waves_ms): the server's step on the wave's
// end and its save, the wave timer, the next wave's step, save and commits, and a trip each way; the pause is in it.
// The target is at most 100 ms above the pause, at p50 and at max. INFRA_BENCH_NODES sets the fleet (default 1000).
import { report, runInTempDir, SHARED, spawnTester, target } from './support.js';

const NODES = Number(process.env.INFRA_BENCH_NODES ?? 1000);
const PAUSES_S = [0, 2];
const ABOVE_PAUSE_MS = 100;

interface Figures {
  jobs_by_status?: Record<string, number>;
  between_waves_ms?: { p50: number | null; max: number | null; gaps: number; waves_complete: number } | null;
  errors?: string[];
}

runInTempDir('infra-bench-rollout-', async () => {
  for (const pause of PAUSES_S) {
    const args = ['--spawn', '--nodes', String(NODES), '--jobs', '1', '--waves', '10%', '--pause', String(pause)];
    const output = await spawnTester([...args, '--json']).output();
    const lines = output.trimEnd().split('\n');
    console.log(`infra-loadtest ${args.join(' ')}\n${lines.slice(0, -1).join('\n')}\n`);
    const f = JSON.parse(lines.at(-1) ?? '{}') as Figures;
    const w = f.between_waves_ms;
    if (w == null || w.p50 === null || w.max === null)
      throw new Error(`no time between waves measured: ${JSON.stringify(f.errors ?? f)}`);
    const limit = ABOVE_PAUSE_MS + pause * 1000;
    const of = `${w.gaps} gaps, ${w.waves_complete} waves complete, job ${JSON.stringify(f.jobs_by_status)}`;
    const figure = `${NODES.toLocaleString('en')} nodes, waves of 10%, pause ${pause} s: time between waves`;
    report(`${figure} p50`, `${w.p50} ms (${of})`, {
      target: target(`≤ ${limit} ms (100 ms + pause)`, w.p50 <= limit),
      setup: SHARED,
    });
    report(`${figure} max`, `${w.max} ms`, { target: target(`≤ ${limit} ms`, w.max <= limit), setup: SHARED });
  }
});
