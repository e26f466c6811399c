// A thread of the signature pool (signature-pool.ts): answers each batch with the index of the key that verified
// each check, -1 when none did, or UNCHECKED when the batch named a key this thread does not hold.
import type { KeyObject } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { UNCHECKED, unpackBatch, type KeyUpdate } from './signature-batch.js';
import { firstVerifyingKey } from './signed-headers.js';

const keys = new Map<number, KeyObject>();

parentPort?.on('message', (m: Uint8Array | KeyUpdate) => {
  if (!(m instanceof Uint8Array)) {
    if (m.forget) keys.clear();
    for (const [n, key] of m.newKeys) keys.set(n, key);
    return;
  }
  const answers = new Int32Array(unpackBatch(m, keys).map((c) => (c === null ? UNCHECKED : firstVerifyingKey(c))));
  parentPort?.postMessage(answers, [answers.buffer]);
});
