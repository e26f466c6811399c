// What a signed request's RSA check costs the main thread: inline (signature_threads 0) against sent to a worker
// thread in batches of 1, 3 and 10 (what a busy server's batches hold). The figure is the main thread's busy time
// (event-loop utilization) per check while it waits for batch after batch, so it counts packing, posting and
// receiving the answers, not the worker's own work. Offloading pays when a check costs the main thread less here
// than inline. Rounds alternate; medians of ROUNDS.
import { generateKeyPairSync } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { SignaturePool } from '../src/auth/signature-pool.js';
import { readAuthHeaders, signatureCheckOf, signRequest, type SignatureCheck } from '../src/auth/signed-headers.js';
import { median, report } from './support.js';

const ROUNDS = 5;
const CHECKS_PER_ROUND = 6000;
const BATCHES = [1, 3, 10];

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

/** The check of a signed GET of a job, as the server builds it. */
function checkOf(i: number): SignatureCheck {
  const path = `/organizations/default/pushy/jobs/${i.toString(16).padStart(32, '0')}`;
  const headers = signRequest({ privateKey, userId: 'admin', method: 'GET', path, version: '1.1' });
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const read = readAuthHeaders((name) => lower.get(name), Date.now(), 900);
  if (!read.ok) throw new Error('the signed headers were refused');
  const check = signatureCheckOf(read.auth, [publicKey], 'GET', path, '');
  if (check === null) throw new Error('no check for a well-formed request');
  return check;
}

/** Main-thread busy µs per check, checking `batch` at a time until CHECKS_PER_ROUND are done. */
async function busyPerCheck(pool: SignaturePool, checks: SignatureCheck[], batch: number): Promise<number> {
  const before = performance.eventLoopUtilization();
  for (let done = 0; done < CHECKS_PER_ROUND; done += batch) {
    const answers = await Promise.all(checks.slice(0, batch).map((c) => pool.check(c)));
    if (answers.some((a) => a !== 0)) throw new Error('a check failed');
  }
  return (performance.eventLoopUtilization(before).active * 1000) / CHECKS_PER_ROUND;
}

async function main(): Promise<void> {
  const checks = Array.from({ length: Math.max(...BATCHES) }, (_, i) => checkOf(i));
  const inline = new SignaturePool({ threads: 0 });
  const offloaded = new SignaturePool({ threads: 1, offload: () => true });
  const ways = [
    { label: 'inline', pool: inline, batch: 1 },
    ...BATCHES.map((batch) => ({ label: `worker thread, batches of ${batch}`, pool: offloaded, batch })),
  ];
  for (const w of ways) await busyPerCheck(w.pool, checks, w.batch);
  const figures = new Map<string, number[]>(ways.map((w) => [w.label, []]));
  for (let round = 0; round < ROUNDS; round++)
    for (const w of ways) figures.get(w.label)?.push(await busyPerCheck(w.pool, checks, w.batch));
  await Promise.all([inline.close(), offloaded.close()]);
  console.log('| where the check runs | main thread µs per check (median) | each round |');
  console.log('|---|---:|---|');
  for (const [label, xs] of figures) {
    const sorted = [...xs].sort((a, b) => a - b);
    console.log(`| ${label} | ${median(sorted).toFixed(1)} | ${xs.map((x) => x.toFixed(1)).join(', ')} |`);
    report(`main thread per RSA check, ${label}`, `${median(sorted).toFixed(1)} µs`);
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
