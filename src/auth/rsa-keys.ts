// RSA key material: generating key pairs, reading public keys (memoized) and private keys from PEM (reference 1.6).
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPair as generateKeyPairCallback,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';

const generateRsaPair = promisify(generateKeyPairCallback);

/** Parsed public keys kept; the oldest unused one is dropped first. */
export const PUBLIC_KEY_CACHE_SIZE = 4096;
// A certificate with long extensions stays well under this; anything longer is not a key we issue or accept.
const MAX_PEM_LENGTH = 16384;
const PUBLIC_PEM = /^-----BEGIN (PUBLIC KEY|RSA PUBLIC KEY|CERTIFICATE)-----[A-Za-z0-9+/=\s]+-----END \1-----$/;
const PRIVATE_PEM = /^-----BEGIN (RSA PRIVATE KEY|PRIVATE KEY)-----[A-Za-z0-9+/=\s]+-----END \1-----$/;

export interface GeneratedKeyPair {
  /** PKCS#1, `BEGIN RSA PRIVATE KEY`. */
  privateKeyPem: string;
  /** SPKI, `BEGIN PUBLIC KEY`. */
  publicKeyPem: string;
}

/** A fresh RSA-2048 pair, generated on libuv's thread pool so the event loop keeps serving. */
export async function generateKeyPair(): Promise<GeneratedKeyPair> {
  const { privateKey, publicKey } = await generateRsaPair('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

const publicKeys = new Map<string, KeyObject>();

function decodePublicKey(pem: string): KeyObject | null {
  const text = pem.trim();
  const label = PUBLIC_PEM.exec(text)?.[1];
  if (label === undefined) return null;
  try {
    const key =
      label === 'CERTIFICATE' ? new X509Certificate(text).publicKey : createPublicKey({ key: text, format: 'pem' });
    return key.asymmetricKeyType === 'rsa' ? key : null;
  } catch {
    return null;
  }
}

/**
 * An RSA public key from one SPKI (`BEGIN PUBLIC KEY`), PKCS#1 (`BEGIN RSA PUBLIC KEY`) or X.509 certificate PEM
 * block; null for anything else, private keys included. Results are cached by the exact text.
 */
export function parsePublicKey(pem: string): KeyObject | null {
  if (typeof pem !== 'string' || pem.length > MAX_PEM_LENGTH) return null;
  const cached = publicKeys.get(pem);
  if (cached !== undefined) {
    // Re-inserting moves the entry to the end of the Map's order, so eviction drops the least recently used.
    publicKeys.delete(pem);
    publicKeys.set(pem, cached);
    return cached;
  }
  const key = decodePublicKey(pem);
  if (key === null) return null;
  if (publicKeys.size >= PUBLIC_KEY_CACHE_SIZE) {
    const oldest = publicKeys.keys().next();
    if (oldest.done !== true) publicKeys.delete(oldest.value);
  }
  publicKeys.set(pem, key);
  return key;
}

/** SPKI PEMs of parsed keys: a fleet registering with one shared key exports it once. */
const spkiPems = new WeakMap<KeyObject, string>();

/** The SPKI PEM of an accepted public key (the form the keys API returns), or null. */
export function toSpkiPem(pem: string): string | null {
  const key = parsePublicKey(pem);
  if (key === null) return null;
  let spki = spkiPems.get(key);
  if (spki === undefined) spkiPems.set(key, (spki = key.export({ type: 'spki', format: 'pem' }).toString()));
  return spki;
}

/** An unencrypted RSA private key from PKCS#1 (`BEGIN RSA PRIVATE KEY`) or PKCS#8 (`BEGIN PRIVATE KEY`) PEM. */
export function readPrivateKey(pem: string): KeyObject {
  const text = typeof pem === 'string' ? pem.trim() : '';
  if (text.includes('ENCRYPTED')) {
    throw new Error('the private key is encrypted; decrypt it first (openssl pkey -in KEY -out PLAIN)');
  }
  if (!PRIVATE_PEM.test(text)) {
    throw new Error('not an RSA private key: expected one PEM block "BEGIN RSA PRIVATE KEY" or "BEGIN PRIVATE KEY"');
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch (cause) {
    throw new Error('the private key PEM could not be decoded (damaged or truncated)', { cause });
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new Error(`not an RSA private key: the PEM holds key type '${key.asymmetricKeyType ?? 'unknown'}'`);
  }
  return key;
}
