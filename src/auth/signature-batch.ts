// How a batch of signature checks crosses to a worker thread (signature-pool.ts, signature-worker.ts): the bytes of
// every check in one buffer that is moved, not copied (a Buffer made from a string is a view of an 8 KB pool that
// postMessage would copy whole), and each key sent once per worker, by number, since cloning a KeyObject costs
// more than the rest of a check's message.
import type { KeyObject } from 'node:crypto';
import type { SignatureCheck, SignVersion } from './signed-headers.js';

/** A worker's answer for a check it could not make: the pool makes it inline. */
export const UNCHECKED = -2;

export interface CheckBatch {
  /** Keys the worker has not seen, by number; with `forget`, it drops those it holds first. */
  newKeys: Array<[number, KeyObject]>;
  forget: boolean;
  checks: Array<{ version: SignVersion; keys: number[] }>;
  /** Canonical string then signature of each check, back to back. */
  bytes: Uint8Array;
  /** End offsets in `bytes`: canonical and signature of each check. */
  ends: Uint32Array;
}

/** The batch and the buffers to move with it. */
export function packBatch(
  checks: readonly SignatureCheck[],
  keyNumber: (key: KeyObject) => number,
): { batch: Omit<CheckBatch, 'newKeys' | 'forget'>; transfer: ArrayBuffer[] } {
  let size = 0;
  for (const c of checks) size += c.canonical.length + c.signature.length;
  const bytes = new Uint8Array(size);
  const ends = new Uint32Array(checks.length * 2);
  let at = 0;
  checks.forEach((c, i) => {
    bytes.set(c.canonical, at);
    ends[2 * i] = at += c.canonical.length;
    bytes.set(c.signature, at);
    ends[2 * i + 1] = at += c.signature.length;
  });
  return {
    batch: { checks: checks.map((c) => ({ version: c.version, keys: c.keys.map(keyNumber) })), bytes, ends },
    transfer: [bytes.buffer, ends.buffer],
  };
}

/** The checks of a batch with the worker's keys by number; null for a check naming a key the worker does not hold. */
export function unpackBatch(batch: CheckBatch, keys: ReadonlyMap<number, KeyObject>): Array<SignatureCheck | null> {
  const bytes = Buffer.from(batch.bytes.buffer, batch.bytes.byteOffset, batch.bytes.byteLength);
  let at = 0;
  return batch.checks.map((c, i) => {
    const canonicalEnd = batch.ends[2 * i] ?? at;
    const signatureEnd = batch.ends[2 * i + 1] ?? canonicalEnd;
    const canonical = bytes.subarray(at, canonicalEnd);
    const signature = bytes.subarray(canonicalEnd, signatureEnd);
    at = signatureEnd;
    const held = c.keys.flatMap((n) => keys.get(n) ?? []);
    return held.length === c.keys.length ? { version: c.version, canonical, signature, keys: held } : null;
  });
}
