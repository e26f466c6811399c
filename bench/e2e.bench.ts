// The whole product as users run it: the compiled infra-server, three push-jobs-client processes and the cli.
// Figures: the wall time of `cli job start` for a no-op command on 3 nodes, measured around the cli child
// process (its own start-up included), and an idle client's resident memory and CPU use at the default
// heartbeat_interval of 1000 ms.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../src/auth/api-client.js';
import { childEnv, runBin } from '../test/support/process-run.js';
import { startNodeFleet, waitForNodes, type FleetNode } from '../test/support/node-fleet.js';
import { cpuTicks, median, report, rssKiB, scope, startServer, teardowns } from './support.js';

const RUNS = 10;
const FLOOR_RUNS = 3;
const IDLE_MS = 10_000;
const NODES = ['node1', 'node2', 'node3'];

/** Wall-clock milliseconds of each run of `run`, sorted. */
async function timed(runs: number, before: () => Promise<void>, run: () => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    await before();
    const start = process.hrtime.bigint();
    await run();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-bench-e2e-'));
  scope.teardown(() => rm(dir, { recursive: true, force: true }));
  const home = join(dir, 'home');
  await mkdir(home);
  const { url, dataDir } = await startServer(dir, { heartbeat_interval: 1000 });
  const admin = new ApiClient({
    baseUrl: url,
    userId: 'admin',
    key: await readFile(join(dataDir, 'admin.pem'), 'utf8'),
  });
  const nodes: FleetNode[] = await startNodeFleet(scope, {
    serverUrl: url,
    validationKey: join(dataDir, 'default-validator.pem'),
    dir: join(dir, 'nodes'),
    names: NODES,
    whitelist: () => ({ noop: 'true' }),
    logLevel: 'info',
  });
  const ready = () => waitForNodes(admin, nodes, 'available', 20_000);
  const env = childEnv({ HOME: home });
  const cli = async (args: string[]) => {
    const r = await runBin('cli', [...args, '-c', join(dataDir, 'config.rb')], { cwd: dir, env });
    if (r.code !== 0) throw new Error(`cli ${args.join(' ')} exited ${r.code}:\n${r.stdout}${r.stderr}`);
  };

  const rows: string[] = [];
  const row = (what: string, figure: string, note: string) => {
    rows.push(`| ${what} | ${figure} | ${note} |`);
    report(`${what} (${note})`, figure);
  };
  const ms = (n: number) => `${n.toFixed(0)} ms`;

  await ready();
  const floor = await timed(
    FLOOR_RUNS,
    async () => undefined,
    () => cli(['node', 'status']),
  );
  row(
    'cli node status (cli start-up + 1 request)',
    `median ${ms(median(floor))}, max ${ms(floor.at(-1) ?? NaN)}`,
    `${FLOOR_RUNS} runs`,
  );
  for (const poll of ['0.1', '1']) {
    const runs = poll === '1' ? 3 : RUNS;
    const times = await timed(runs, ready, () => cli(['job', 'start', 'noop', ...NODES, '--poll-interval', poll]));
    row(
      `cli job start noop on 3 nodes, --poll-interval ${poll}`,
      `median ${ms(median(times))}, max ${ms(times.at(-1) ?? NaN)}`,
      `${runs} runs, start to exit of the cli process`,
    );
  }

  await ready();
  const clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const pids = nodes.map((n) => n.pid());
  const before = await Promise.all(pids.map(cpuTicks));
  const started = Date.now();
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const after = await Promise.all(pids.map(cpuTicks));
  const seconds = (Date.now() - started) / 1000;
  const cpu = pids.map((_, i) => (((after[i] ?? NaN) - (before[i] ?? NaN)) / clkTck / seconds) * 100);
  const rss = await Promise.all(pids.map(rssKiB));
  const list = (values: number[], unit: string, digits: number) =>
    values.map((v) => `${v.toFixed(digits)}${unit}`).join(', ');
  row(
    'idle client RSS (VmRSS)',
    list(
      rss.map((k) => k / 1024),
      ' MiB',
      1,
    ),
    '3 clients, heartbeat_interval 1000, after the jobs above',
  );
  row('idle client CPU (utime+stime)', list(cpu, ' %', 2), `3 clients over ${seconds.toFixed(1)} s, ${clkTck} ticks/s`);

  console.log('| Measure | Figure | Conditions |');
  console.log('|---|---|---|');
  for (const r of rows) console.log(r);
}

try {
  await main();
} finally {
  for (const fn of teardowns.reverse()) await fn();
}
