// Memory per connected node, one connection pair each (CurveZMQ, one heartbeat a second both ways), against a
// floor measured in the same run: bare ZeroMQ routers configured as the server's that verify the heartbeats and
// answer them (heartbeat-play.ts). Each figure is the growth of resident memory between a process holding
// FEW nodes and a fresh one holding MANY, divided by the difference, so what every process has anyway cancels
// out. libzmq's share grows with a connection's traffic (its message pipes fill 16 KB chunks one 64-byte slot
// per message), so both sides play the same SECONDS of heartbeats before the reading.
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../src/server.js';
import { benchConfig, childOrMain, play, serverLoad, startFloor, type Load } from './heartbeat-play.js';
import { median, report, SHARED, target } from './support.js';

const FEW = 1000;
const MANY = Number(process.env.INFRA_BENCH_NODES ?? 3000);
const SECONDS = 20;
const ROUNDS = Number(process.env.INFRA_BENCH_ROUNDS ?? 3);
const INTERVAL_MS = 1000;
/** Target of the fleet-scale issue, per connected node. */
const TARGET_KB = 12;

interface Reading {
  rss: number;
  heapUsed: number;
}

/** Plays the nodes, one pair each, and reads this process's memory a second before they stop. */
async function readWhilePlaying(load: Load): Promise<Reading> {
  let reading: Reading | undefined;
  const timer = setTimeout(
    () => {
      global.gc?.();
      const m = process.memoryUsage();
      reading = { rss: m.rss, heapUsed: m.heapUsed };
    },
    (SECONDS - 1) * 1000,
  );
  await play(load, { dealers: load.nodes.length, seconds: SECONDS, rate: 1000 / INTERVAL_MS });
  clearTimeout(timer);
  if (!reading) throw new Error('the nodes stopped before memory was read');
  return reading;
}

async function floor(count: number): Promise<Reading> {
  const f = await startFloor(count, INTERVAL_MS, { command: true });
  try {
    const r = await readWhilePlaying(f.load);
    if (f.accepted() < count * (SECONDS / 2)) throw new Error(`the floor heard only ${f.accepted()} heartbeats`);
    return r;
  } finally {
    await f.stop();
  }
}

async function server(count: number): Promise<Reading> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-bench-'));
  const s = await startServer(benchConfig(dir, INTERVAL_MS));
  try {
    const before = s.hub.status().heartbeats;
    const r = await readWhilePlaying(await serverLoad(s, count));
    const heard = s.hub.status().heartbeats - before;
    if (heard < count * (SECONDS / 2)) throw new Error(`the server accepted only ${heard} heartbeats`);
    return r;
  } finally {
    await s.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  }
}

/** Each reading in a fresh process of its own, with the collector exposed so the heap is read after a collection. */
function measure(which: 'floor' | 'server', count: number): Promise<Reading> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [which, String(count)], {
      execArgv: [...process.execArgv, '--expose-gc'],
    });
    child.once('message', (m: Reading | { error: string }) => ('error' in m ? reject(new Error(m.error)) : resolve(m)));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the ${which} process exited with code ${code} before reporting`)));
  });
}

const perNodeKB = (few: number, many: number) => (many - few) / (MANY - FEW) / 1024;

async function main(): Promise<void> {
  const rows: string[] = [];
  const server_: number[] = [];
  const ratios: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const f = perNodeKB((await measure('floor', FEW)).rss, (await measure('floor', MANY)).rss);
    const few = await measure('server', FEW);
    const many = await measure('server', MANY);
    const s = perNodeKB(few.rss, many.rss);
    const heap = perNodeKB(few.heapUsed, many.heapUsed);
    server_.push(s);
    ratios.push(s / f);
    rows.push(`| ${round} | ${f.toFixed(1)} | ${s.toFixed(1)} | ${heap.toFixed(1)} | ${(s / f).toFixed(2)} |`);
  }
  console.log(
    `Resident memory per connected node between ${FEW} and ${MANY} nodes, one connection pair each, CurveZMQ, ` +
      `a heartbeat a second both ways for ${SECONDS} s\n`,
  );
  console.log('| round | floor KB/node | server KB/node | of it, server JS heap KB/node | ratio |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  console.log(
    `\nmedian: server ${median(sorted(server_)).toFixed(1)} KB per node (target ${TARGET_KB}), ` +
      `ratio to the floor ${median(sorted(ratios)).toFixed(2)}`,
  );
  const kb = median(sorted(server_));
  report('memory per connected node, a connection pair each, 1 s heartbeat', `${kb.toFixed(1)} KB`, {
    target: target(`≤ ${TARGET_KB} KB`, kb <= TARGET_KB),
    ratio: `${median(sorted(ratios)).toFixed(2)} × the floor`,
    setup: SHARED,
  });
}

childOrMain(
  ['floor', 'server'],
  (which) => (which === 'floor' ? floor(Number(process.argv[3])) : server(Number(process.argv[3]))),
  main,
);
