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
import { curveKeyPair, Router } from 'zeromq';
import { serverConfigSchema, type ServerConfig } from '../src/config/server-config.js';
import { parseHeader, signedText } from '../src/protocol/frames.js';
import { envelopeFor } from '../src/protocol/messages.js';
import { hmacVerify, newSessionKey } from '../src/protocol/signing.js';
import { startServer } from '../src/server.js';
import { Outbox } from '../src/transport/outbox.js';
import { median } from './support.js';

const NODES = Number(process.env.INFRA_BENCH_NODES ?? 10_000);
const SECONDS = 12;
const ROUNDS = 3;
const DEALERS = 8;
const INTERVAL_MS = 1000;
const METRICS = process.env.INFRA_BENCH_METRICS === '1';

interface Load {
  addr: string;
  commandAddr?: string;
  curveServerKey: string;
  nodes: Array<{ name: string; key: string }>;
}

interface Figure {
  accepted: number;
  cpuMs: number;
}

/** Plays the nodes at one heartbeat per node per interval for SECONDS; resolves with how many were sent. */
function play(load: Load): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('../dist/bench/heartbeat-flood.js', import.meta.url)));
    child.send({ ...load, org: 'default', dealers: DEALERS, seconds: SECONDS, rate: 1000 / INTERVAL_MS });
    child.once('message', (m: { sent?: number; error?: string }) =>
      m.error ? reject(new Error(m.error)) : resolve(m.sent ?? 0),
    );
    child.once('error', reject);
    // A child that dies first (say, the benchmarks are not compiled: run `npm run bench`) must not hang the run.
    child.once('exit', (code) => reject(new Error(`the node player exited with code ${code} before reporting`)));
  });
}

const ignore = (): undefined => undefined;

/** CPU time of this process (user + system) while `during` runs, in ms. */
async function cpuDuring<T>(during: () => Promise<T>): Promise<{ value: T; cpuMs: number }> {
  const before = process.cpuUsage();
  const value = await during();
  const used = process.cpuUsage(before);
  return { value, cpuMs: (used.user + used.system) / 1000 };
}

async function floor(): Promise<Figure> {
  const curve = curveKeyPair();
  const router = new Router({ linger: 0, curveServer: true, curveSecretKey: curve.secretKey });
  await router.bind('tcp://127.0.0.1:*');
  const addr = router.lastEndpoint ?? '';
  // A router takes one send at a time when a peer's pipe is full: the floor queues as the server does.
  const out = new Outbox(router, () => undefined);
  const names = Array.from({ length: NODES }, (_, i) => `node-${i}`);
  const keys = new Map(names.map((n) => [n, newSessionKey()]));
  const heard = new Map<string, Buffer>();
  const incarnation = '00000000-0000-4000-8000-000000000000';
  let accepted = 0;
  let sequence = 0;
  const beat = setInterval(() => {
    const now = Date.now();
    for (const [node, id] of heard) {
      const key = keys.get(node);
      if (!key) continue;
      const body = {
        type: 'heartbeat',
        ...envelopeFor('default', node, incarnation, ++sequence, now),
        server: 'x',
        interval_ms: INTERVAL_MS,
      };
      out.push([id, ...signedText(body, key)]);
    }
  }, INTERVAL_MS);
  const receiving = (async () => {
    for await (const [id, header, body] of router) {
      if (!id || !header || !body) continue;
      const h = parseHeader(header);
      const msg = JSON.parse(body.toString('utf8')) as { node: string };
      const key = keys.get(msg.node);
      if (!h.ok || !key || !hmacVerify(key, body, h.signature)) continue;
      heard.set(msg.node, id);
      accepted += 1;
    }
  })();
  const load = {
    addr,
    curveServerKey: curve.publicKey,
    nodes: names.map((name) => ({ name, key: keys.get(name)?.toString('base64') ?? '' })),
  };
  const { cpuMs } = await cpuDuring(() => play(load));
  clearInterval(beat);
  router.close();
  await receiving.catch(() => undefined);
  return { accepted, cpuMs };
}

async function server(): Promise<Figure> {
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
    heartbeat_interval: INTERVAL_MS,
    log_level: 'warn',
    ...(METRICS ? { metrics_port: 0 } : {}),
  };
  const s = await startServer(config);
  try {
    const nodes: Array<{ name: string; key: string }> = [];
    for (let i = 0; i < NODES; i += 500) {
      const batch = Array.from({ length: Math.min(500, NODES - i) }, (_, k) => `node-${i + k}`);
      const grants = await Promise.all(batch.map((name) => s.hub.openSession('default', name)));
      for (const [k, name] of batch.entries()) nodes.push({ name, key: grants[k]?.key.toString('base64') ?? '' });
    }
    const d = s.hub.describe();
    // Heartbeats only: the CPU also pays for each node's one rehab abort and its answer, which are not counted.
    const before = s.hub.status().heartbeats;
    const url = s.metricsUrl;
    // A scrape still under way when the server closes is cut off, as Prometheus's would be.
    const scrape = (at: string) =>
      void fetch(at)
        .then((r) => r.text(), ignore)
        .catch(ignore);
    const scraping = url ? setInterval(() => scrape(url), 1000) : undefined;
    const { cpuMs } = await cpuDuring(() =>
      play({ addr: d.heartbeat_addr, commandAddr: d.command_addr, curveServerKey: d.curve_public_key ?? '', nodes }),
    );
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

const which = process.argv[2];
if (which === 'floor' || which === 'server') {
  (which === 'floor' ? floor() : server()).then(
    (f) => process.send?.(f, () => process.exit(0)),
    (e: unknown) => process.send?.({ error: String(e) }, () => process.exit(1)),
  );
} else {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
