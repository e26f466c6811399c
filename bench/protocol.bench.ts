// Cost of the heartbeat hot path: encode+sign, decode+verify (whole and step by step), and heap bytes per decoded heartbeat.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { encodeMessage, parseHeader, signedText } from '../src/protocol/frames.js';
import { parseHttpDate } from '../src/lib/dates.js';
import { clientMessageSchema, enveloped, envelopeFor, type ClientHeartbeat } from '../src/protocol/messages.js';
import { decodeFrames, type DecodeOptions } from '../src/protocol/receive.js';
import { ReplayGuard } from '../src/protocol/replay.js';
import { hmacSign, hmacVerify, newSessionKey } from '../src/protocol/signing.js';
import { report } from './support.js';

const RUN_MS = 1000;
const WARMUP_MS = 200;
const NODES = 20_000;

/** Runs `fn` in batches until `ms` has passed; returns operations per second and microseconds per operation. */
function measure(fn: (i: number) => unknown, ms: number): { opsPerSec: number; usPerOp: number } {
  let i = 0;
  const warmUntil = process.hrtime.bigint() + BigInt(WARMUP_MS) * 1_000_000n;
  while (process.hrtime.bigint() < warmUntil) fn(i++);
  let ops = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    for (let j = 0; j < 50; j++) fn(i++);
    ops += 50;
    now = process.hrtime.bigint();
  }
  const seconds = Number(now - start) / 1e9;
  return { opsPerSec: ops / seconds, usPerOp: (seconds * 1e6) / ops };
}

function row(name: string, fn: (i: number) => unknown): void {
  const { opsPerSec, usPerOp } = measure(fn, RUN_MS);
  console.log(`| ${name} | ${Math.round(opsPerSec).toLocaleString('en-US')} | ${usPerOp.toFixed(2)} |`);
  report(name.trim(), `${usPerOp.toFixed(2)} µs`);
}

// 20,000 nodes with their own keys, as one server process would hold them.
const keys = new Map<string, Buffer>();
for (let n = 0; n < NODES; n++) keys.set(`node-${n}`, newSessionKey());
const keyFor = (_org: string, node: string): Buffer | undefined => keys.get(node);
const now = Date.now();
const incarnation = '6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f';

function heartbeat(n: number, sequence: number): ClientHeartbeat {
  return {
    type: 'heartbeat',
    ...envelopeFor('acme', `node-${n % NODES}`, incarnation, sequence, now),
    job_state: 'idle',
    job_id: null,
  };
}

// Pre-encoded traffic: one heartbeat per node per "second", sequences rising so the replay guard passes them all.
const ROUNDS = 40;
const traffic: Buffer[][] = [];
for (let r = 0; r < ROUNDS; r++) {
  for (let n = 0; n < NODES; n += 40) {
    const key = keys.get(`node-${n}`);
    if (key === undefined) throw new Error('missing key');
    const [header, body] = encodeMessage(heartbeat(n, r + 1), key);
    traffic.push([Buffer.from('ident'), header, body]);
  }
}
const sample = traffic[0];
const sampleKey = keys.get('node-0');
if (sample?.[1] === undefined || sample[2] === undefined || sampleKey === undefined) throw new Error('no sample');
const [, sampleHeader, sampleBody] = sample as [Buffer, Buffer, Buffer];
const sampleJson: unknown = JSON.parse(sampleBody.toString('utf8'));
const sampleSignature = hmacSign(sampleKey, sampleBody);

/** Options for a fresh pass over the traffic; the guard is reset so every message is new. */
function options(): DecodeOptions & { schema: 'client' } {
  return { expectIdentity: true, now, keyFor, replay: new ReplayGuard(), schema: 'client' };
}

let opts = options();
function decodeAt(i: number): void {
  const k = i % traffic.length;
  if (k === 0) opts = options();
  const frames = traffic[k];
  if (frames === undefined) throw new Error('no frames');
  const r = decodeFrames(frames, opts);
  if (!r.ok) throw new Error(`bench heartbeat dropped: ${r.reason} ${r.detail}`);
}

const nodes = NODES.toLocaleString('en-US');
console.log(
  `${sampleHeader.length}-byte header, ${sampleBody.length}-byte heartbeat body, ${nodes} node keys, Node ${process.version}`,
);
console.log('');
console.log('| operation | msgs/s | µs/msg |');
console.log('|---|---:|---:|');
let seq = 0;
row('encode+sign heartbeat (envelope, JSON, HMAC, header)', (i) => encodeMessage(heartbeat(i, ++seq), sampleKey));
// A job's commit as the server writes it to each of its nodes: one message object for the job, an envelope per
// node. The spread of both is how it was built before: the same text, serialized about five times slower.
const commit = { type: 'commit', job_id: 'a'.repeat(32), command: 'chef-client', run_timeout: 3600 } as const;
const envelopeOf = (i: number) => envelopeFor('acme', `node-${i % NODES}`, incarnation, ++seq, now);
row('sign a commit for one node (enveloped)', (i) => signedText(enveloped(commit, envelopeOf(i)), sampleKey));
row('  the same built with { ...commit, ...envelope }', (i) => signedText({ ...commit, ...envelopeOf(i) }, sampleKey));
row('decode+verify heartbeat (decodeFrames, all checks)', decodeAt);
row('  step: parseHeader', () => parseHeader(sampleHeader));
row('  step: JSON.parse of the body', () => JSON.parse(sampleBody.toString('utf8')));
row('  step: hmacVerify', () => hmacVerify(sampleKey, sampleBody, sampleSignature));
row('  step: zod clientMessageSchema.safeParse', () => clientMessageSchema.safeParse(sampleJson));
row('  step: parseHttpDate', () => parseHttpDate('Sat, 21 Nov 2026 10:35:19 GMT'));

// Heap bytes per operation: batches small enough to fit the young generation, each started right after a forced
// young-generation collection; a batch during which a scavenge ran shows a negative delta and is discarded. Buffers made in C++
// (the HMAC digest) live outside the heap and are not counted.
setFlagsFromString('--expose-gc');
const gc: unknown = runInNewContext('gc');

function heapPerOp(fn: (i: number) => unknown): string {
  if (typeof gc !== 'function') return 'n/a';
  const BATCH = 500;
  const deltas: number[] = [];
  for (let b = 0; b < 40; b++) {
    gc({ type: 'minor' });
    const before = process.memoryUsage().heapUsed;
    for (let j = 0; j < BATCH; j++) fn(b * BATCH + j);
    const delta = process.memoryUsage().heapUsed - before;
    if (delta > 0) deltas.push(delta / BATCH);
  }
  deltas.sort((a, c) => a - c);
  const median = deltas[Math.floor(deltas.length / 2)];
  return median === undefined ? 'n/a' : String(Math.round(median));
}

console.log('');
console.log('| allocation | heap bytes/op |');
console.log('|---|---:|');
console.log(`| decode+verify heartbeat (decodeFrames) | ${heapPerOp(decodeAt)} |`);
console.log(`|   step: parseHeader | ${heapPerOp(() => parseHeader(sampleHeader))} |`);
console.log(`|   step: JSON.parse of the body | ${heapPerOp(() => JSON.parse(sampleBody.toString('utf8')))} |`);
console.log(`|   step: hmacVerify | ${heapPerOp(() => hmacVerify(sampleKey, sampleBody, sampleSignature))} |`);
console.log(
  `|   step: zod clientMessageSchema.safeParse | ${heapPerOp(() => clientMessageSchema.safeParse(sampleJson))} |`,
);
