// Message signing with per-node session keys (hmac_sha256), and the RSA wrapping that hands a session key to its node.
import { constants, createHmac, privateDecrypt, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';

/** The only signing method on our wire (decision: no rsa2048_sha1 heartbeats, unlike reference 2.4). */
export const SIGNING_METHOD = 'hmac_sha256';
export const SESSION_KEY_BYTES = 32;
/** HMAC-SHA256 digests are 32 bytes, so their padded base64 is always 44 characters. */
export const SIGNATURE_B64_LENGTH = 44;

/** A fresh 32-byte session key (reference 2.5). */
export function newSessionKey(): Buffer {
  return randomBytes(SESSION_KEY_BYTES);
}

/** base64(HMAC-SHA256(key, body)) over the body bytes exactly as sent (reference 2.4); text is signed as UTF-8. */
export function hmacSign(key: Buffer, body: Buffer | string): string {
  return createHmac('sha256', key).update(body).digest('base64');
}

/**
 * Whether `signatureB64` is the HMAC of `body` under `key`. The base64 texts are compared in full whatever
 * they hold, so the time taken does not reveal how many leading characters matched; decoding the signature
 * into bytes first would cost a buffer per message for nothing (a 32-byte digest has one padded base64 text,
 * which parseHeader insists on). A signature of the wrong length is false.
 */
export function hmacVerify(key: Buffer, body: Buffer, signatureB64: string): boolean {
  if (signatureB64.length !== SIGNATURE_B64_LENGTH) return false;
  const expected = createHmac('sha256', key).update(body).digest('base64');
  let differ = 0;
  for (let i = 0; i < SIGNATURE_B64_LENGTH; i++) differ |= expected.charCodeAt(i) ^ signatureB64.charCodeAt(i);
  return differ === 0;
}

/** Raised when an encoded session key cannot be unwrapped with the node's private key. */
export class SessionKeyError extends Error {
  override name = 'SessionKeyError';
}

/**
 * Wraps a session key for the config endpoint's `encoded_session_key.key` (reference 3): base64 of the key
 * encrypted to the node's RSA public key with RSA-OAEP, SHA-256 for both the hash and MGF1. The original used
 * PKCS#1 v1.5 padding, which is open to padding-oracle (Bleichenbacher) attacks; OAEP is not.
 */
export function encryptSessionKey(key: Buffer, publicKey: KeyObject | string): string {
  return publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, key).toString(
    'base64',
  );
}

/** The inverse of encryptSessionKey, on the node. Throws SessionKeyError unless it yields a 32-byte key. */
export function decryptSessionKey(b64: string, privateKey: KeyObject | string): Buffer {
  let key: Buffer;
  try {
    key = privateDecrypt(
      { key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
      Buffer.from(b64, 'base64'),
    );
  } catch (cause) {
    throw new SessionKeyError('the session key does not decrypt with this private key', { cause });
  }
  if (key.length !== SESSION_KEY_BYTES)
    throw new SessionKeyError(`the session key is ${key.length} bytes, expected ${SESSION_KEY_BYTES}`);
  return key;
}
