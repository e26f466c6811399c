// Creations per second in one organization, the way a fleet is provisioned: N clients, then N nodes, then each
// client's push config, C requests in flight, signed by one process. With the file store every write is synced,
// so this is where grouping an organization's writes into batches shows. Medians of ROUNDS fresh servers.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { curveKeyPair } from 'zeromq';
import { ApiClient } from '../src/auth/api-client.js';
import { fetchPushConfig } from '../src/client/push-config.js';
import { median, report, startServer, teardowns } from './support.js';

const N = Number(process.env.INFRA_BENCH_WRITES ?? 400);
const CONCURRENCY = 32;
const ROUNDS = 3;

async function phase(n: number, fn: (k: number) => Promise<void>): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  const lane = async () => {
    for (let k = next++; k < n; k = next++) await fn(k);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return n / ((performance.now() - t0) / 1000);
}

const ccpk = curveKeyPair().publicKey;
const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const figures: Record<'clients' | 'nodes' | 'configs', number[]> = { clients: [], nodes: [], configs: [] };
try {
  for (let round = 0; round < ROUNDS; round += 1) {
    const dir = await mkdtemp(join(tmpdir(), 'infra-bench-writes-'));
    const server = await startServer(dir);
    const admin = new ApiClient({
      baseUrl: server.url,
      userId: 'admin',
      key: await readFile(join(server.dataDir, 'admin.pem'), 'utf8'),
    });
    const expect = async (res: Promise<{ status: number; body: unknown }>, status: number) => {
      const r = await res;
      if (r.status !== status) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
    };
    const org = '/organizations/default';
    figures.clients.push(
      await phase(N, (k) =>
        expect(admin.request('POST', `${org}/clients`, { name: `w${k}`, public_key: publicPem }), 201),
      ),
    );
    figures.nodes.push(await phase(N, (k) => expect(admin.request('POST', `${org}/nodes`, { name: `w${k}` }), 201)));
    figures.configs.push(
      await phase(N, async (k) => {
        const client = new ApiClient({ baseUrl: server.url, userId: `w${k}`, key: privateKey });
        await fetchPushConfig(client, org, `w${k}`, privateKey, ccpk);
      }),
    );
    for (const t of teardowns.splice(0)) await t();
    await rm(dir, { recursive: true, force: true });
  }
  const fmt = (xs: number[]) =>
    `${median([...xs].sort((a, b) => a - b)).toFixed(0)}/s (${xs.map((x) => x.toFixed(0)).join(', ')})`;
  console.log(`org writes, file store, ${N} each, ${CONCURRENCY} in flight, median of ${ROUNDS}:`);
  console.log(`  POST clients  ${fmt(figures.clients)}`);
  console.log(`  POST nodes    ${fmt(figures.nodes)}`);
  console.log(`  GET config    ${fmt(figures.configs)}`);
  for (const [what, xs] of [
    ['POST clients', figures.clients],
    ['POST nodes', figures.nodes],
    ['GET config', figures.configs],
  ] as const)
    report(`${what}, ${N} in one organization, ${CONCURRENCY} in flight`, fmt(xs));
} finally {
  for (const t of teardowns.splice(0)) await t();
}
