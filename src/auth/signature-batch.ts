// How a batch of signature checks crosses to a worker thread (signature-pool.ts, signature-worker.ts): every check
// in one byte array that is moved, not copied or cloned. With a message of objects (each check's version and keys,
// its bytes and their offsets) the hop cost the main thread about a third more (bench/signature-hop.bench.ts), and
// the hop is most of what offloading a check costs the main thread. Keys go once per worker, by number, in
// a message of their own before the batch that first names them, since cloning a KeyObject costs more than the
// rest of a check's message.
import type { KeyObject } from 'node:crypto';
import { SUPPORTED_VERSIONS, type SignatureCheck } from './signed-headers.js';

/** A worker's answer for a check it could not make: the pool makes it inline. */
export const UNCHECKED = -2;

/** Keys the worker has not seen, by number; with `forget`, it drops those it holds first. */
export interface KeyUpdate {
  newKeys: Array<[number, KeyObject]>;
  forget: boolean;
}

// Per check: version (index in SUPPORTED_VERSIONS, 1 byte), key count (1 byte), each key's number (4 bytes), the
// canonical string's and the signature's lengths (4 bytes each), then their bytes. A batch starts with its count.
const COUNT_BYTES = 4;
const fixedBytes = (keys: number) => 2 + 4 * keys + 8;

/** The checks in one array over a buffer of its own, to be transferred. */
export function packBatch(
  checks: readonly SignatureCheck[],
  keyNumber: (key: KeyObject) => number,
): Uint8Array<ArrayBuffer> {
  let size = COUNT_BYTES;
  for (const c of checks) size += fixedBytes(c.keys.length) + c.canonical.length + c.signature.length;
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, checks.length, true);
  let at = COUNT_BYTES;
  for (const c of checks) {
    view.setUint8(at, SUPPORTED_VERSIONS.indexOf(c.version));
    view.setUint8(at + 1, c.keys.length);
    at += 2;
    for (const key of c.keys) {
      view.setUint32(at, keyNumber(key), true);
      at += 4;
    }
    view.setUint32(at, c.canonical.length, true);
    view.setUint32(at + 4, c.signature.length, true);
    at += 8;
    bytes.set(c.canonical, at);
    at += c.canonical.length;
    bytes.set(c.signature, at);
    at += c.signature.length;
  }
  return bytes;
}

/** The checks of a batch with the worker's keys by number; null for a check naming a key the worker does not hold. */
export function unpackBatch(batch: Uint8Array, keys: ReadonlyMap<number, KeyObject>): Array<SignatureCheck | null> {
  const bytes = Buffer.from(batch.buffer, batch.byteOffset, batch.byteLength);
  const count = bytes.readUInt32LE(0);
  const checks: Array<SignatureCheck | null> = [];
  let at = COUNT_BYTES;
  for (let i = 0; i < count; i++) {
    const version = SUPPORTED_VERSIONS[bytes.readUInt8(at)];
    const keyCount = bytes.readUInt8(at + 1);
    at += 2;
    const held: KeyObject[] = [];
    for (let k = 0; k < keyCount; k++) {
      const key = keys.get(bytes.readUInt32LE(at));
      if (key) held.push(key);
      at += 4;
    }
    const canonicalLength = bytes.readUInt32LE(at);
    const signatureLength = bytes.readUInt32LE(at + 4);
    at += 8;
    const canonical = bytes.subarray(at, (at += canonicalLength));
    const signature = bytes.subarray(at, (at += signatureLength));
    checks.push(
      version !== undefined && held.length === keyCount ? { version, canonical, signature, keys: held } : null,
    );
  }
  return checks;
}
