// Heartbeats through the real push-jobs transport: a child process plays the nodes over ZeroMQ, the server
// verifies each message and hands it to the node's actor. Two figures: the most heartbeats per second one
// server process accepts, and whether it keeps up with 20,000 nodes heartbeating once a second.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startServer } from '../src/server.js';
import { benchConfig, play, serverLoad } from './heartbeat-play.js';
import { report, SHARED } from './support.js';

interface Scenario {
  label: string;
  nodes: number;
  dealers: number;
  seconds: number;
  rate: number;
  curve: boolean;
}

const SCENARIOS: Scenario[] = [
  { label: 'flood, 2,000 nodes, CurveZMQ off', nodes: 2000, dealers: 4, seconds: 6, rate: 0, curve: false },
  { label: 'flood, 2,000 nodes, CurveZMQ on', nodes: 2000, dealers: 4, seconds: 6, rate: 0, curve: true },
  { label: '20,000 nodes at 1 heartbeat/s, CurveZMQ on', nodes: 20_000, dealers: 8, seconds: 12, rate: 1, curve: true },
];

async function run(s: Scenario): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-bench-'));
  const config = benchConfig(dir, 1000, { curve_encryption: s.curve });
  const server = await startServer(config);
  try {
    // Heartbeats only: nothing answers the server's rehab abort, so the command channel stays unconnected.
    const { commandAddr: _unused, ...load } = await serverLoad(server, s.nodes);
    const before = server.hub.status().accepted;
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const rssBefore = process.memoryUsage().rss;
    const t0 = Date.now();
    const sent = await play(load, { dealers: s.dealers, seconds: s.seconds, rate: s.rate });
    // Let the server drain what is queued, up to 5 s.
    const drainUntil = Date.now() + 5000;
    while (server.hub.status().accepted - before < sent && Date.now() < drainUntil)
      await new Promise((r) => setTimeout(r, 50));
    const elapsed = (Date.now() - t0) / 1000;
    lag.disable();
    const status = server.hub.status();
    const accepted = status.accepted - before;
    const dropped = Object.values(status.dropped).reduce((a, b) => a + b, 0);
    const rssMiB = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    report(
      `${s.label}, over ${s.dealers} connections: heartbeats accepted`,
      `${accepted} of ${sent} (${Math.round(accepted / elapsed)}/s), ${dropped} dropped, ${status.connected_nodes} nodes up at the end`,
      { setup: SHARED },
    );
    return `| ${s.label} | ${sent} | ${accepted} | ${Math.round(accepted / elapsed)} | ${dropped} | ${(lag.percentile(99) / 1e6).toFixed(1)} | ${status.connected_nodes} | ${rssMiB.toFixed(0)} |`;
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: string[] = [];
  for (const s of SCENARIOS) rows.push(await run(s));
  console.log(
    '| scenario | sent | accepted | accepted/s | dropped | event-loop delay p99 (ms) | nodes up at the end | RSS growth (MiB) |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
  process.exit(0);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
