// The longest request during a Redis outage: a server on a private redis-server, a steady stream of signed
// reads and writes, Redis killed for OUTAGE_S seconds and started again with its data. Reads should stay fast,
// writes be refused within store_timeout, and every write answered 201 must exist afterwards.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../src/auth/api-client.js';
import { startPrivateRedis } from '../test/support/private-redis.js';
import { report, scope, startServer, target, teardowns } from './support.js';

const OUTAGE_S = Number(process.env.INFRA_BENCH_OUTAGE_S ?? 10);
const STORE_TIMEOUT_S = 2;
const NODES = '/organizations/default/nodes';

interface Sample {
  kind: 'read' | 'write';
  ms: number;
  status: number;
  phase: 'before' | 'outage' | 'after';
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-bench-outage-'));
  try {
    const redis = await startPrivateRedis(scope);
    const { url, dataDir } = await startServer(dir, { redis_url: redis.url, store_timeout: STORE_TIMEOUT_S });
    const admin = new ApiClient({
      baseUrl: url,
      userId: 'admin',
      key: await readFile(join(dataDir, 'admin.pem'), 'utf8'),
    });
    await admin.request('POST', NODES, { name: 'reader' });
    let phase: Sample['phase'] = 'before';
    const samples: Sample[] = [];
    const accepted: string[] = [];
    let stop = false;
    const timed = async (kind: Sample['kind'], call: () => Promise<{ status: number }>) => {
      const at = phase;
      const started = Date.now();
      const { status } = await call();
      samples.push({ kind, ms: Date.now() - started, status, phase: at });
      return status;
    };
    const reader = async () => {
      while (!stop) await timed('read', () => admin.send('GET', `${NODES}/reader`));
    };
    const writer = async () => {
      for (let i = 0; !stop; i++) {
        const name = `w-${i}`;
        if ((await timed('write', () => admin.send('POST', NODES, { name }))) === 201) accepted.push(name);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const load = Promise.all([reader(), writer()]);
    await new Promise((r) => setTimeout(r, 2000));
    phase = 'outage';
    await redis.kill();
    await new Promise((r) => setTimeout(r, OUTAGE_S * 1000));
    await redis.start({ keepData: true });
    phase = 'after';
    await new Promise((r) => setTimeout(r, 5000));
    stop = true;
    await load;

    let lost = 0;
    for (const name of accepted) if ((await admin.send('GET', `${NODES}/${name}`)).status !== 200) lost++;
    console.log(`Redis killed for ${OUTAGE_S} s under a server with store_timeout ${STORE_TIMEOUT_S} s\n`);
    console.log('| phase | request | count | answered 2xx | 503 | longest ms |');
    console.log('|---|---|---:|---:|---:|---:|');
    for (const p of ['before', 'outage', 'after'] as const)
      for (const kind of ['read', 'write'] as const) {
        const rows = samples.filter((s) => s.phase === p && s.kind === kind);
        const ok = rows.filter((s) => s.status < 300).length;
        const refused = rows.filter((s) => s.status === 503).length;
        console.log(
          `| ${p} | ${kind} | ${rows.length} | ${ok} | ${refused} | ${Math.max(0, ...rows.map((s) => s.ms))} |`,
        );
      }
    console.log(`\nwrites answered 201: ${accepted.length}; missing afterwards: ${lost}`);
    const outage = samples.filter((s) => s.phase === 'outage');
    const longest = (kind: Sample['kind']) => Math.max(0, ...outage.filter((s) => s.kind === kind).map((s) => s.ms));
    const reads = outage.filter((s) => s.kind === 'read');
    const writes = outage.filter((s) => s.kind === 'write');
    report(
      `Redis killed for ${OUTAGE_S} s: reads answered, longest`,
      `${reads.filter((s) => s.status < 300).length} of ${reads.length}, ${longest('read')} ms`,
    );
    report(
      'the same: writes refused (503), longest',
      `${writes.filter((s) => s.status === 503).length} of ${writes.length}, ${longest('write')} ms`,
      { target: target(`within store_timeout ${STORE_TIMEOUT_S} s`, longest('write') <= STORE_TIMEOUT_S * 1000) },
    );
    report('the same: writes answered 201 and lost', `${lost} of ${accepted.length}`, {
      target: target('0', lost === 0),
    });
  } finally {
    for (const fn of teardowns.splice(0).reverse()) await fn();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
