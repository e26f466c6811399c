// Signed request headers (X-Ops-Sign protocol 1.0-1.3): signing for our tools, header checks and verification for the server (reference 1).
import { constants, createHash, privateEncrypt, publicDecrypt, sign, verify, type KeyObject } from 'node:crypto';
import { isoSeconds } from '../lib/dates.js';
import { rememberLast, rememberRecent } from '../lib/remember.js';
import { readPrivateKey } from './rsa-keys.js';

export type SignVersion = '1.0' | '1.1' | '1.2' | '1.3';
export type SignAlgorithm = 'sha1' | 'sha256';
export const SUPPORTED_VERSIONS: readonly SignVersion[] = ['1.0', '1.1', '1.2', '1.3'];

/** Server API versions accepted in X-Ops-Server-API-Version (reference 1.1). */
export const API_MIN_VERSION = 0;
export const API_MAX_VERSION = 2;
/** erchef's default `auth_skew` (reference 1.5). */
export const DEFAULT_AUTH_SKEW_SECONDS = 900;
export const WWW_AUTHENTICATE = `X-Ops-Sign ${SUPPORTED_VERSIONS.map((v) => `version="${v}"`).join(' ')}`;

const LINE_LENGTH = 60;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;
const INTEGER = /^[+-]?\d+$/;

export function isSignVersion(v: unknown): v is SignVersion {
  return typeof v === 'string' && (SUPPORTED_VERSIONS as readonly string[]).includes(v);
}

/** The digest a version implies: sha1 for 1.0-1.2, sha256 for 1.3 (reference 1.2). */
export function algorithmFor(version: SignVersion): SignAlgorithm {
  return version === '1.3' ? 'sha256' : 'sha1';
}

function digest64(algorithm: SignAlgorithm, data: string | Buffer): string {
  return createHash(algorithm).update(data).digest('base64');
}

/** Drop `?query`, collapse runs of `/`, strip a trailing `/` except for the root (reference 1.2). */
export function canonicalPath(path: string): string {
  const q = path.indexOf('?');
  const collapsed = (q === -1 ? path : path.slice(0, q)).replace(/\/{2,}/g, '/');
  const trimmed = collapsed.endsWith('/') ? collapsed.slice(0, -1) : collapsed;
  return trimmed === '' ? '/' : trimmed;
}

/** SHA-1 hashes of short texts, recent ones kept: protocols 1.0 and 1.1 hash the path (and 1.1 the user id) of
 * every request, and a server sees the same few again and again. */
const recentSha1 = rememberRecent(1024, (text: string) => digest64('sha1', text));
const SHA1_KEPT_UP_TO = 256;

function sha1Of(text: string): string {
  return text.length > SHA1_KEPT_UP_TO ? digest64('sha1', text) : recentSha1(text);
}

/** The hash of an empty body (every GET) by algorithm: computed once, not per request. */
const EMPTY_BODY_HASH: Record<SignAlgorithm, string> = { sha1: digest64('sha1', ''), sha256: digest64('sha256', '') };

/** The X-Ops-Content-Hash value for a body under a version. */
export function hashBody(body: string | Buffer, version: SignVersion): string {
  return body.length === 0 ? EMPTY_BODY_HASH[algorithmFor(version)] : digest64(algorithmFor(version), body);
}

export interface CanonicalRequest {
  version: SignVersion;
  method: string;
  path: string;
  contentHash: string;
  timestamp: string;
  userId: string;
  serverApiVersion: number;
}

/** The exact string that is signed, lines joined by LF with no trailing newline (reference 1.3). */
export function canonicalString(r: CanonicalRequest): string {
  const method = r.method.toUpperCase();
  const path = canonicalPath(r.path);
  if (r.version === '1.3') {
    return [
      `Method:${method}`,
      `Path:${path}`,
      `X-Ops-Content-Hash:${r.contentHash}`,
      'X-Ops-Sign:version=1.3',
      `X-Ops-Timestamp:${r.timestamp}`,
      `X-Ops-UserId:${r.userId}`,
      `X-Ops-Server-API-Version:${r.serverApiVersion}`,
    ].join('\n');
  }
  const userId = r.version === '1.0' ? r.userId : sha1Of(r.userId);
  return [
    `Method:${method}`,
    `Hashed Path:${sha1Of(path)}`,
    `X-Ops-Content-Hash:${r.contentHash}`,
    `X-Ops-Timestamp:${r.timestamp}`,
    `X-Ops-UserId:${userId}`,
  ].join('\n');
}

/**
 * Epoch seconds of an exact `YYYY-MM-DDTHH:MM:SSZ` timestamp, or null (offsets and fractions are refused). Requests
 * of one second share their timestamp: the last one read is kept.
 */
export const parseTimestamp: (ts: string) => number | null = rememberLast(parseIsoSeconds);

function parseIsoSeconds(ts: string): number | null {
  const m = TIMESTAMP.exec(ts);
  if (m === null) return null;
  const [y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0] = m.slice(1).map(Number);
  if (h > 23 || mi > 59 || s > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return null;
  date.setUTCHours(h, mi, s, 0);
  return Math.floor(date.getTime() / 1000);
}

export type ServerApiVersionResult =
  { ok: true; version: number } | { ok: false; requestVersion: number; body: Record<string, unknown> };

/** Absent means 0; anything but an integer in range is a 406 (reference 1.6 step 0). */
export function parseServerApiVersion(raw: string | undefined): ServerApiVersionResult {
  if (raw === undefined) return { ok: true, version: 0 };
  const n = INTEGER.test(raw) ? Number(raw) : Number.NaN;
  if (Number.isSafeInteger(n) && n >= API_MIN_VERSION && n <= API_MAX_VERSION) return { ok: true, version: n };
  return {
    ok: false,
    requestVersion: Number.isSafeInteger(n) ? n : -1,
    body: {
      error: 'invalid-x-ops-server-api-version',
      message: `Specified version ${raw} not supported`,
      min_version: API_MIN_VERSION,
      max_version: API_MAX_VERSION,
    },
  };
}

export interface SignOptions {
  privateKey: KeyObject | string;
  userId: string;
  method: string;
  path: string;
  body?: string | Buffer;
  version?: SignVersion;
  timestamp?: string;
  serverApiVersion?: number;
}

function createSignature(version: SignVersion, canonical: Buffer, key: KeyObject): Buffer {
  if (version === '1.2' || version === '1.3') return sign(algorithmFor(version), canonical, key);
  try {
    return privateEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, canonical);
  } catch (cause) {
    // 1.0/1.1 encrypt the canonical string itself, so it must fit in the modulus (reference 1.2).
    throw new Error(
      `cannot sign with version ${version}: the ${canonical.length}-byte canonical string is too long for this key; use version 1.1 or 1.3`,
      { cause },
    );
  }
}

/** Headers for one request. A PEM private key is parsed on every call; pass a KeyObject when signing often. */
export function signRequest(o: SignOptions): Record<string, string> {
  const version = o.version ?? '1.3';
  if (!isSignVersion(version)) throw new Error(`unsupported signing version '${String(version)}'`);
  const timestamp = o.timestamp ?? isoSeconds(Date.now());
  if (parseTimestamp(timestamp) === null) throw new Error(`timestamp must be YYYY-MM-DDTHH:MM:SSZ, got '${timestamp}'`);
  const serverApiVersion = o.serverApiVersion ?? 1;
  if (!Number.isSafeInteger(serverApiVersion))
    throw new Error(`serverApiVersion must be an integer, got ${serverApiVersion}`);
  const key = typeof o.privateKey === 'string' ? readPrivateKey(o.privateKey) : o.privateKey;
  const contentHash = hashBody(o.body ?? '', version);
  const canonical = canonicalString({
    version,
    method: o.method,
    path: o.path,
    contentHash,
    timestamp,
    userId: o.userId,
    serverApiVersion,
  });
  const signature = createSignature(version, Buffer.from(canonical, 'utf8'), key).toString('base64');
  const headers: Record<string, string> = {
    'X-Ops-Sign': `algorithm=${algorithmFor(version)};version=${version}`,
    'X-Ops-Userid': o.userId,
    'X-Ops-Timestamp': timestamp,
    'X-Ops-Content-Hash': contentHash,
    'X-Ops-Server-API-Version': String(serverApiVersion),
  };
  for (let i = 0; i * LINE_LENGTH < signature.length; i++) {
    headers[`X-Ops-Authorization-${i + 1}`] = signature.slice(i * LINE_LENGTH, (i + 1) * LINE_LENGTH);
  }
  return headers;
}

export interface SignedRequestAuth {
  userId: string;
  version: SignVersion;
  algorithm: SignAlgorithm;
  timestamp: string;
  contentHash: string;
  signature: Buffer;
  serverApiVersion: number;
}

export type AuthHeaderResult =
  | { ok: true; auth: SignedRequestAuth }
  | { ok: false; status: 400 | 401 | 406; body: Record<string, unknown>; wwwAuthenticate?: boolean };

function failure(status: 400 | 401, message: string): AuthHeaderResult {
  return { ok: false, status, body: { error: [message] } };
}

/** The 401 when no user or client of that name has an unexpired key (reference 1.6 step 2.2). */
export function unknownRequestor(userId: string): AuthHeaderResult & { ok: false } {
  return {
    ok: false,
    status: 401,
    body: { error: [`Failed to authenticate as '${userId}'. Ensure that your node_name and client key are correct.`] },
  };
}

/** The 401 for a signature that does not verify; also used by the server when no key verifies. */
export function invalidSignature(userId: string): AuthHeaderResult & { ok: false } {
  return {
    ok: false,
    status: 401,
    body: { error: [`Invalid signature for user or client '${userId}'`] },
    wwwAuthenticate: true,
  };
}

/** Split on `;` then `=`; parts that are not exactly key=value are ignored, the first of a key wins (chef_authn). */
function parseSignDescription(desc: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of desc.split(';')) {
    const kv = part.split('=');
    if (kv.length !== 2) continue;
    const [k = '', v = ''] = kv;
    if (!out.has(k)) out.set(k, v);
  }
  return out;
}

const REQUIRED_HEADERS = [
  ['X-Ops-UserId', 'x-ops-userid'],
  ['X-Ops-Timestamp', 'x-ops-timestamp'],
  ['X-Ops-Sign', 'x-ops-sign'],
  ['X-Ops-Content-Hash', 'x-ops-content-hash'],
] as const;

/**
 * Everything erchef checks before looking up keys, in its order (reference 1.6): API version (406), required
 * headers (400), timestamp format and skew (401), X-Ops-Sign (400; chef_authn validate_headers checks the clock
 * before the sign description), then a missing signature (401).
 */
export function readAuthHeaders(
  header: (name: string) => string | undefined,
  nowMs: number,
  skewSeconds: number,
): AuthHeaderResult {
  const api = parseServerApiVersion(header('x-ops-server-api-version'));
  if (!api.ok) return { ok: false, status: 406, body: api.body };

  const values = REQUIRED_HEADERS.map(([label, name]) => {
    const v = header(name);
    return { label, value: v === '' ? undefined : v };
  });
  const missing = values.filter((h) => h.value === undefined).map((h) => `'${h.label}'`);
  if (missing.length > 0) return failure(400, `missing required authentication header(s) ${missing.join(', ')}`);
  const [userId = '', timestamp = '', signDesc = '', contentHash = ''] = values.map((h) => h.value ?? '');

  const ts = parseTimestamp(timestamp);
  if (ts === null) return failure(401, "bad header(s) 'X-Ops-Timestamp'");
  // erchef compares whole seconds and allows strictly less than the skew (reference 1.5).
  if (Math.abs(Math.floor(nowMs / 1000) - ts) >= skewSeconds) {
    return failure(401, `Failed to authenticate as ${userId}. Synchronize the clock on your host.`);
  }

  const desc = parseSignDescription(signDesc);
  const version = desc.get('version');
  if (!isSignVersion(version)) return failure(400, 'Unsupported authentication protocol version');
  const algorithm = desc.get('algorithm') ?? algorithmFor(version);
  if (algorithm !== algorithmFor(version)) return failure(400, 'Unsupported authentication protocol version');

  const lines: string[] = [];
  for (let i = 1; ; i++) {
    // Empty counts as missing here too, and reading stops at the first missing index (chef_authn sig_from_headers).
    const line = header(`x-ops-authorization-${i}`);
    if (line === undefined || line === '') break;
    lines.push(line);
  }
  const signature = Buffer.from(lines.join(''), 'base64');
  if (signature.length === 0) return invalidSignature(userId);

  return {
    ok: true,
    auth: {
      userId,
      version,
      algorithm: algorithmFor(version),
      timestamp,
      contentHash,
      signature,
      serverApiVersion: api.version,
    },
  };
}

function verifyWithKey(version: SignVersion, canonical: Buffer, signature: Buffer, key: KeyObject): boolean {
  // An EC or other key would make verify() check a different scheme; only RSA keys sign this protocol.
  if (key.type === 'secret' || key.asymmetricKeyType !== 'rsa') return false;
  const size = Math.ceil((key.asymmetricKeyDetails?.modulusLength ?? 0) / 8);
  if (signature.length === 0 || signature.length > size) return false;
  // go-chef's 1.0 signer drops leading zero bytes (reference 1.7); the integer is the same once re-padded.
  const sig = signature.length < size ? Buffer.concat([Buffer.alloc(size - signature.length), signature]) : signature;
  try {
    if (version === '1.2' || version === '1.3') return verify(algorithmFor(version), canonical, key, sig);
    return publicDecrypt({ key, padding: constants.RSA_PKCS1_PADDING }, sig).equals(canonical);
  } catch {
    return false;
  }
}

/** One request's signature against the keys that may have made it, as a worker thread can take it. */
export interface SignatureCheck {
  version: SignVersion;
  /** The canonical string the server built from what it received. */
  canonical: Buffer;
  signature: Buffer;
  keys: readonly KeyObject[];
}

/**
 * The check a request needs, or null when it cannot verify whatever the key. The canonical string is built from the
 * body the server received, never from the client's X-Ops-Content-Hash, which must also match (reference 1.6 step
 * 2.4).
 */
export function signatureCheckOf(
  auth: SignedRequestAuth,
  keys: readonly KeyObject[],
  method: string,
  path: string,
  body: Buffer | string,
): SignatureCheck | null {
  try {
    const { version } = auth;
    if (!isSignVersion(version) || auth.algorithm !== algorithmFor(version) || !Buffer.isBuffer(auth.signature))
      return null;
    const contentHash = hashBody(body, version);
    if (auth.contentHash !== contentHash) return null;
    const canonical = Buffer.from(
      canonicalString({
        version,
        method,
        path,
        contentHash,
        timestamp: auth.timestamp,
        userId: auth.userId,
        serverApiVersion: auth.serverApiVersion,
      }),
      'utf8',
    );
    return { version, canonical, signature: auth.signature, keys };
  } catch {
    return null;
  }
}

/** Index of the first key of the check that verifies it, or -1. */
export function firstVerifyingKey(check: SignatureCheck): number {
  return check.keys.findIndex((key) => verifyWithKey(check.version, check.canonical, check.signature, key));
}

/** Index of the first key in `keys` that verifies the request, or -1. */
export function verifyRequest(
  auth: SignedRequestAuth,
  keys: readonly KeyObject[],
  method: string,
  path: string,
  body: Buffer | string,
): number {
  const check = signatureCheckOf(auth, keys, method, path, body);
  return check === null ? -1 : firstVerifyingKey(check);
}
