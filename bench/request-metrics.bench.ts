// What the metrics add to an API request: the same Hono routes answered in this process without and with the
// request-metrics middleware (route pattern, counter, histogram), alternated over rounds, beside the cost of
// verifying one request signature, which every signed request pays anyway.
import { Hono } from 'hono';
import { createPrivateKey } from 'node:crypto';
import { generateKeyPair, parsePublicKey } from '../src/auth/rsa-keys.js';
import { DEFAULT_AUTH_SKEW_SECONDS, readAuthHeaders, signRequest, verifyRequest } from '../src/auth/signed-headers.js';
import { requestMetrics } from '../src/http/request-metrics.js';
import { Counters } from '../src/lib/counters.js';
import { ServerMetrics } from '../src/metrics/server-metrics.js';
import { median, report } from './support.js';

const REQUESTS = 50_000;
const ROUNDS = 5;
const PATH = '/organizations/acme/nodes/web';

function app(observe?: ServerMetrics['observeRequest']): Hono {
  const a = new Hono();
  if (observe) a.use('*', requestMetrics(observe));
  a.get('/organizations/:org/nodes/:name', (c) => c.json({ name: c.req.param('name') }));
  a.all('/organizations/:org/nodes/:name', (c) => c.json({ error: ['method not allowed'] }, 405));
  return a;
}

/** Microseconds per request over REQUESTS requests to 100 node names. */
async function perRequest(a: Hono): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < REQUESTS; i++) await a.request(`${PATH}${i % 100}`);
  return ((performance.now() - start) * 1000) / REQUESTS;
}

async function verifyCost(): Promise<number> {
  const pair = await generateKeyPair();
  const publicKey = parsePublicKey(pair.publicKeyPem);
  if (publicKey === null) throw new Error('generated public key was refused');
  const privateKey = createPrivateKey(pair.privateKeyPem);
  const headers = signRequest({ privateKey, userId: 'admin', method: 'GET', path: PATH, body: '' });
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const r = readAuthHeaders((name) => lower.get(name), Date.now(), DEFAULT_AUTH_SKEW_SECONDS);
  if (!r.ok) throw new Error(`bench request refused: ${JSON.stringify(r.body)}`);
  const n = 2000;
  const start = performance.now();
  for (let i = 0; i < n; i++) verifyRequest(r.auth, [publicKey], 'GET', PATH, '');
  return ((performance.now() - start) * 1000) / n;
}

async function main(): Promise<void> {
  const metrics = new ServerMetrics({
    nodeCounts: () => [],
    push: () => undefined,
    counters: new Counters(),
    storeFailing: () => false,
  });
  const plain = app();
  const timed = app(metrics.observeRequest);
  await perRequest(plain);
  await perRequest(timed);
  const without: number[] = [];
  const withMetrics: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    without.push(await perRequest(plain));
    withMetrics.push(await perRequest(timed));
  }
  const a = median([...without].sort((x, y) => x - y));
  const b = median([...withMetrics].sort((x, y) => x - y));
  console.log('| measure | µs per request |');
  console.log('|---|---:|');
  console.log(`| routes only | ${a.toFixed(2)} |`);
  console.log(`| routes with request metrics | ${b.toFixed(2)} |`);
  console.log(`| added by the metrics | ${(b - a).toFixed(2)} |`);
  console.log(`| one signature verification (for scale) | ${(await verifyCost()).toFixed(1)} |`);
  report('request metrics: added per request', `${(b - a).toFixed(2)} µs (${a.toFixed(2)} → ${b.toFixed(2)})`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
