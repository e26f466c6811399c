// CPU per heartbeat: the server's whole receive path (frames, header, JSON, HMAC, message checks, replay guard,
// the node follower and its machine, the server's own heartbeats back) against a floor measured in the same run by
// the same generator: a bare ZeroMQ loop in this process that receives, parses, verifies each heartbeat and sends
// a signed heartbeat back to every node each interval, and does nothing else. Both run with CurveZMQ on and take
// the nodes' command connections too, so both pay the same handshakes; the nodes are played by heartbeat-flood.ts
// in a child process, answering the server's rehab abort as clients do. The ratio is the server's CPU per heartbeat
// over the floor's (the target: at most 1.3), over the whole play and over its steady part: the first
// seconds also hold each node's arrival (the server's rehab abort, the node's answer, its state saved), a cost
// paid once per node and not per heartbeat. A second floor also makes that exchange (a signed abort to each node
// first heard, its answer read and verified, nothing saved), so the whole play is compared like with like beside
// the figures above. INFRA_BENCH_METRICS=1 turns the server's metrics listener on and
// scrapes it every second while the nodes play, to price the metrics with a scrape rate well above the usual (the
// scraping fetch runs in the measured process, so its own cost is counted too).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/server.js';
import {
  benchConfig,
  childOrMain,
  measureInChild,
  play,
  serverLoad,
  startFloor,
  type Load,
  type Play,
} from './heartbeat-play.js';
import { median, report, SHARED, target } from './support.js';

const NODES = Number(process.env.INFRA_BENCH_NODES ?? 10_000);
const SECONDS = 12;
const ROUNDS = 3;
const DEALERS = 8;
const INTERVAL_MS = 1000;
const METRICS = process.env.INFRA_BENCH_METRICS === '1';
/** Nodes come up within the first interval; their rehab aborts, answers and state saves are done well before. */
const STEADY_AFTER_S = 4;
const SESSIONS_SYNCED_MS = 2500;

interface Figure {
  accepted: number;
  cpuMs: number;
  /** The same from STEADY_AFTER_S into the play to its end: every node up, its abort answered and its state saved. */
  steady: { accepted: number; cpuMs: number };
}

const playing: Play = { dealers: DEALERS, seconds: SECONDS, rate: 1000 / INTERVAL_MS };

const ignore = (): undefined => undefined;

const cpuMsSince = (before?: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
};

/**
 * CPU time of this process (user + system) and heartbeats accepted while the nodes play, in ms: over the whole
 * play, and over its steady part.
 */
async function measurePlay(load: Load, accepted: () => number): Promise<Figure> {
  const before = process.cpuUsage();
  const acceptedBefore = accepted();
  let mark: { cpu: NodeJS.CpuUsage; accepted: number } | undefined;
  const marking = setTimeout(() => (mark = { cpu: process.cpuUsage(), accepted: accepted() }), STEADY_AFTER_S * 1000);
  await play(load, playing);
  clearTimeout(marking);
  const cpuMs = cpuMsSince(before);
  if (!mark) throw new Error('the play ended before its steady part');
  return {
    accepted: accepted() - acceptedBefore,
    cpuMs,
    steady: { accepted: accepted() - mark.accepted, cpuMs: cpuMsSince(mark.cpu) },
  };
}

async function floor(rehab: boolean): Promise<Figure> {
  const f = await startFloor(NODES, INTERVAL_MS, { command: true, rehab });
  const figure = await measurePlay(f.load, f.accepted);
  await f.stop();
  // Every node arrives once and answers its abort once: a floor short of answers did less than the server.
  if (rehab && f.answers() < NODES) throw new Error(`the floor read ${f.answers()} aborted answers of ${NODES} nodes`);
  return figure;
}

async function server(): Promise<Figure> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-bench-'));
  const config = benchConfig(dir, INTERVAL_MS, METRICS ? { metrics_port: 0 } : {});
  const s = await startServer(config);
  try {
    const load = await serverLoad(s, NODES);
    // The file store syncs the sessions' files a second after they were written: not a cost of the heartbeats.
    await new Promise((resolve) => setTimeout(resolve, SESSIONS_SYNCED_MS));
    // Heartbeats only: the CPU also pays for each node's one rehab abort and its answer, which are not counted.
    const url = s.metricsUrl;
    // A scrape still under way when the server closes is cut off, as Prometheus's would be.
    const scrape = (at: string) =>
      void fetch(at)
        .then((r) => r.text(), ignore)
        .catch(ignore);
    const scraping = url ? setInterval(() => scrape(url), 1000) : undefined;
    const figure = await measurePlay(load, () => s.hub.status().heartbeats);
    clearInterval(scraping);
    return figure;
  } finally {
    await s.close();
    // A node-state flush still under way when close() returns may add a file while the folder is removed.
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  }
}

/** Each measure runs compiled, as a server runs in production (compiledBench says why). */
function measure(which: Role): Promise<Figure> {
  return measureInChild<Figure>('heartbeat-cpu.bench', which);
}

type Role = 'floor' | 'rehab-floor' | 'server';
const ROLES: readonly Role[] = ['floor', 'rehab-floor', 'server'];

async function main(): Promise<void> {
  const rows: string[] = [];
  const ratios: number[] = [];
  const steadyRatios: number[] = [];
  const rehabRatios: number[] = [];
  const serverUs: { whole: number[]; steady: number[] } = { whole: [], steady: [] };
  const perHb = (f: { accepted: number; cpuMs: number }) => (f.cpuMs * 1000) / f.accepted;
  for (let round = 1; round <= ROUNDS; round++) {
    const f = await measure('floor');
    const r = await measure('rehab-floor');
    const s = await measure('server');
    ratios.push(perHb(s) / perHb(f));
    steadyRatios.push(perHb(s.steady) / perHb(f.steady));
    rehabRatios.push(perHb(s) / perHb(r));
    serverUs.whole.push(perHb(s));
    serverUs.steady.push(perHb(s.steady));
    rows.push(
      `| ${round} | ${f.accepted} | ${perHb(f).toFixed(1)} | ${s.accepted} | ${perHb(s).toFixed(1)} | ${(perHb(s) / perHb(f)).toFixed(2)} ` +
        `| ${perHb(f.steady).toFixed(1)} | ${perHb(s.steady).toFixed(1)} | ${(perHb(s.steady) / perHb(f.steady)).toFixed(2)} ` +
        `| ${perHb(r).toFixed(1)} | ${(perHb(s) / perHb(r)).toFixed(2)} |`,
    );
  }
  console.log(
    `${NODES} nodes at 1 heartbeat per ${INTERVAL_MS} ms for ${SECONDS} s, CurveZMQ on, ${DEALERS} dealers` +
      `${METRICS ? ', metrics on and scraped every second' : ''}; steady: from ${STEADY_AFTER_S} s to the end\n`,
  );
  console.log(
    '| round | floor: accepted | floor: CPU µs/heartbeat | server: accepted | server: CPU µs/heartbeat | ratio ' +
      '| steady floor µs/heartbeat | steady server µs/heartbeat | steady ratio ' +
      '| floor with rehab: CPU µs/heartbeat | ratio to the floor with rehab |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
  const mid = (xs: number[]) => median([...xs].sort((a, b) => a - b)).toFixed(2);
  console.log(
    `\nmedian ratio ${mid(ratios)}, steady ${mid(steadyRatios)}, whole play against the floor with rehab ${mid(rehabRatios)}`,
  );
  const over = `${NODES} nodes over ${DEALERS} connections, 1 heartbeat per ${INTERVAL_MS} ms`;
  const setup = SHARED;
  for (const [what, xs, us] of [
    ['whole play', ratios, serverUs.whole],
    ['steady part', steadyRatios, serverUs.steady],
  ] as const)
    report(`${over}: server CPU a heartbeat, ${what}`, `${mid(us)} µs (median of ${ROUNDS} rounds)`, {
      target: target('≤ 1.3 × floor', Number(mid(xs)) <= 1.3),
      ratio: `${mid(xs)} × floor`,
      setup,
    });
  report(`${over}: whole play against the floor with rehab`, `${mid(serverUs.whole)} µs`, {
    ratio: `${mid(rehabRatios)} × that floor`,
    setup,
  });
}

childOrMain(ROLES, (which) => (which === 'server' ? server() : floor(which === 'rehab-floor')), main);
