// CPU per heartbeat: the server's whole receive path (frames, header, JSON, HMAC, message checks, replay guard,
// the node actor and its machine, the server's own heartbeats back) against a floor measured in the same run by
// the same generator: a bare ZeroMQ loop in this process that receives, parses, verifies each heartbeat and sends
// a signed heartbeat back to every node each interval, and does nothing else. Both run with CurveZMQ on; the
// nodes are played by heartbeat-flood.ts in a child process, answering the server's rehab abort as clients do. The ratio is the server's CPU per heartbeat over the
// floor's (the target: at most 1.3). INFRA_BENCH_METRICS=1 turns the server's metrics listener on and
// scrapes it every second while the nodes play, to price the metrics with a scrape rate well above the usual (the
// scraping fetch runs in the measured process, so its own cost is counted too).
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../src/server.js';
import { benchConfig, childOrMain, play, serverLoad, startFloor, type Play } from './heartbeat-play.js';
import { median } from './support.js';

const NODES = Number(process.env.INFRA_BENCH_NODES ?? 10_000);
const SECONDS = 12;
const ROUNDS = 3;
const DEALERS = 8;
const INTERVAL_MS = 1000;
const METRICS = process.env.INFRA_BENCH_METRICS === '1';

interface Figure {
  accepted: number;
  cpuMs: number;
}

const playing: Play = { dealers: DEALERS, seconds: SECONDS, rate: 1000 / INTERVAL_MS };

const ignore = (): undefined => undefined;

/** CPU time of this process (user + system) while `during` runs, in ms. */
async function cpuDuring<T>(during: () => Promise<T>): Promise<{ value: T; cpuMs: number }> {
  const before = process.cpuUsage();
  const value = await during();
  const used = process.cpuUsage(before);
  return { value, cpuMs: (used.user + used.system) / 1000 };
}

async function floor(): Promise<Figure> {
  const f = await startFloor(NODES, INTERVAL_MS, { command: false });
  const { cpuMs } = await cpuDuring(() => play(f.load, playing));
  await f.stop();
  return { accepted: f.accepted(), cpuMs };
}

async function server(): Promise<Figure> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-bench-'));
  const config = benchConfig(dir, INTERVAL_MS, METRICS ? { metrics_port: 0 } : {});
  const s = await startServer(config);
  try {
    const load = await serverLoad(s, NODES);
    // Heartbeats only: the CPU also pays for each node's one rehab abort and its answer, which are not counted.
    const before = s.hub.status().heartbeats;
    const url = s.metricsUrl;
    // A scrape still under way when the server closes is cut off, as Prometheus's would be.
    const scrape = (at: string) =>
      void fetch(at)
        .then((r) => r.text(), ignore)
        .catch(ignore);
    const scraping = url ? setInterval(() => scrape(url), 1000) : undefined;
    const { cpuMs } = await cpuDuring(() => play(load, playing));
    clearInterval(scraping);
    return { accepted: s.hub.status().heartbeats - before, cpuMs };
  } finally {
    await s.close();
    // A node-state flush still under way when close() returns may add a file while the folder is removed.
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  }
}

/** Each measure runs in a fresh process of its own, so neither inherits the other's heap or timers. */
function measure(which: 'floor' | 'server'): Promise<Figure> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [which]);
    child.once('message', (m: Figure | { error: string }) => ('error' in m ? reject(new Error(m.error)) : resolve(m)));
    child.once('error', reject);
  });
}

async function main(): Promise<void> {
  const rows: string[] = [];
  const ratios: number[] = [];
  const perHb = (f: Figure) => (f.cpuMs * 1000) / f.accepted;
  for (let round = 1; round <= ROUNDS; round++) {
    const f = await measure('floor');
    const s = await measure('server');
    ratios.push(perHb(s) / perHb(f));
    rows.push(
      `| ${round} | ${f.accepted} | ${perHb(f).toFixed(1)} | ${s.accepted} | ${perHb(s).toFixed(1)} | ${(perHb(s) / perHb(f)).toFixed(2)} |`,
    );
  }
  console.log(
    `${NODES} nodes at 1 heartbeat per ${INTERVAL_MS} ms for ${SECONDS} s, CurveZMQ on, ${DEALERS} dealers` +
      `${METRICS ? ', metrics on and scraped every second' : ''}\n`,
  );
  console.log(
    '| round | floor: accepted | floor: CPU µs/heartbeat | server: accepted | server: CPU µs/heartbeat | ratio |',
  );
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
  console.log(`\nmedian ratio ${median([...ratios].sort((a, b) => a - b)).toFixed(2)}`);
}

childOrMain(['floor', 'server'], (which) => (which === 'floor' ? floor() : server()), main);
