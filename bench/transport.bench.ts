// Heartbeats through the real push-jobs transport: a child process plays the nodes over ZeroMQ, the server
// verifies each message and hands it to the node's actor. Two figures: the most heartbeats per second one
// server process accepts, and whether it keeps up with 20,000 nodes heartbeating once a second.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serverConfigSchema, type ServerConfig } from '../src/config/server-config.js';
import { startServer } from '../src/server.js';

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
  const config: ServerConfig = {
    ...serverConfigSchema.parse({}),
    api_port: 0,
    api_listen_address: '127.0.0.1',
    data_dir: dir,
    server_heartbeat_port: 0,
    command_port: 0,
    queue_listen_address: 'tcp://127.0.0.1',
    server_name: '127.0.0.1',
    curve_encryption: s.curve,
    log_level: 'warn',
  };
  const server = await startServer(config);
  try {
    const nodes: Array<{ name: string; key: string }> = [];
    for (let i = 0; i < s.nodes; i += 500) {
      const batch = Array.from({ length: Math.min(500, s.nodes - i) }, (_, k) => `node-${i + k}`);
      const grants = await Promise.all(batch.map((name) => server.hub.openSession('default', name)));
      for (const [k, name] of batch.entries()) nodes.push({ name, key: grants[k]?.key.toString('base64') ?? '' });
    }
    const d = server.hub.describe();
    const before = server.hub.status().accepted;
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const rssBefore = process.memoryUsage().rss;
    const t0 = Date.now();
    const sent = await new Promise<number>((resolve, reject) => {
      // The generator runs from the build (`npm run bench` builds first), in a process of its own.
      const child = fork(fileURLToPath(new URL('../dist/bench/heartbeat-flood.js', import.meta.url)));
      child.send({
        addr: d.heartbeat_addr,
        curveServerKey: d.curve_public_key,
        org: 'default',
        nodes,
        dealers: s.dealers,
        seconds: s.seconds,
        rate: s.rate,
      });
      child.once('message', (m: { sent?: number; error?: string }) =>
        m.error ? reject(new Error(m.error)) : resolve(m.sent ?? 0),
      );
      child.once('error', reject);
    });
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
