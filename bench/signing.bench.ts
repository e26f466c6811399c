// Cost of request signing and verification per protocol version, and of public-key parsing with and without the cache.
import { createPublicKey, createPrivateKey, type KeyObject } from 'node:crypto';
import { generateKeyPair, parsePublicKey } from '../src/auth/rsa-keys.js';
import {
  readAuthHeaders,
  signRequest,
  verifyRequest,
  SUPPORTED_VERSIONS,
  DEFAULT_AUTH_SKEW_SECONDS,
  type SignedRequestAuth,
  type SignVersion,
} from '../src/auth/signed-headers.js';
import { report } from './support.js';

const RUN_MS = 2000;
const SHORT_RUN_MS = 1000;
const WARMUP_MS = 200;
const BODY = JSON.stringify({ name: 'web01', run_list: ['recipe[base]'], normal: { tags: ['a', 'b'] } });
const PATH = '/organizations/acme/nodes/web01';

/** Runs `fn` in batches until `ms` has passed; returns operations per second and microseconds per operation. */
function measure(fn: () => unknown, ms: number): { opsPerSec: number; usPerOp: number } {
  const warmUntil = process.hrtime.bigint() + BigInt(WARMUP_MS) * 1_000_000n;
  while (process.hrtime.bigint() < warmUntil) fn();
  let ops = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < 20; i++) fn();
    ops += 20;
    now = process.hrtime.bigint();
  }
  const seconds = Number(now - start) / 1e9;
  return { opsPerSec: ops / seconds, usPerOp: (seconds * 1e6) / ops };
}

function row(name: string, fn: () => unknown, ms = RUN_MS): void {
  const { opsPerSec, usPerOp } = measure(fn, ms);
  console.log(`| ${name} | ${Math.round(opsPerSec).toLocaleString('en-US')} | ${usPerOp.toFixed(1)} |`);
  report(`RSA-2048: ${name}`, `${usPerOp.toFixed(1)} µs`);
}

const pair = await generateKeyPair();
const privateKey = createPrivateKey(pair.privateKeyPem);
const parsed = parsePublicKey(pair.publicKeyPem);
if (parsed === null) throw new Error('generated public key was refused');
const publicKey: KeyObject = parsed;
const now = Date.now();

function signed(version: SignVersion): { headers: Record<string, string>; auth: SignedRequestAuth } {
  const headers = signRequest({ privateKey, userId: 'bench-user', method: 'PUT', path: PATH, body: BODY, version });
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const r = readAuthHeaders((name) => lower.get(name), now, DEFAULT_AUTH_SKEW_SECONDS);
  if (!r.ok) throw new Error(`bench request refused: ${JSON.stringify(r.body)}`);
  if (verifyRequest(r.auth, [publicKey], 'PUT', PATH, BODY) !== 0)
    throw new Error(`bench request for ${version} does not verify`);
  return { headers, auth: r.auth };
}

console.log(`RSA-2048, ${BODY.length}-byte body, Node ${process.version}`);
console.log('');
console.log('| operation | ops/s | µs/op |');
console.log('|---|---:|---:|');
for (const version of SUPPORTED_VERSIONS) {
  const { auth } = signed(version);
  row(`verify ${version} (verifyRequest, one key)`, () => verifyRequest(auth, [publicKey], 'PUT', PATH, BODY));
}
for (const version of SUPPORTED_VERSIONS) {
  row(`sign ${version} (signRequest, KeyObject)`, () =>
    signRequest({ privateKey, userId: 'bench-user', method: 'PUT', path: PATH, body: BODY, version }),
  );
}
const { headers } = signed('1.3');
const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
row(
  'readAuthHeaders 1.3',
  () => readAuthHeaders((name) => lower.get(name), now, DEFAULT_AUTH_SKEW_SECONDS),
  SHORT_RUN_MS,
);
row('parsePublicKey (cache hit)', () => parsePublicKey(pair.publicKeyPem), SHORT_RUN_MS);
row('createPublicKey (no cache)', () => createPublicKey(pair.publicKeyPem), SHORT_RUN_MS);
