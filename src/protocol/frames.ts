// The two frames of every push-jobs message: the signed header `Version:2.0;SigningMethod:hmac_sha256;Signature:B64` and the JSON body (reference 2.3).
import { hmacSign, SIGNATURE_B64_LENGTH, SIGNING_METHOD } from './signing.js';

export const PROTOCOL_VERSION = '2.0';
/** Reference 2.3: a longer header frame is refused before it is read. */
export const MAX_HEADER_SIZE = 2048;
/** Reference 3: `max_body_size`, the largest body frame a receiver reads. */
export const DEFAULT_MAX_BODY_SIZE = 65536;

const HEADER_PREFIX = `Version:${PROTOCOL_VERSION};SigningMethod:${SIGNING_METHOD};Signature:`;

/**
 * The header and body frames for `body` as text, signed with the session key: the JSON is serialized once and
 * the signature covers its UTF-8 bytes, which is what zeromq sends for a string. Senders pass these strings
 * to zeromq as they are: a string frame is converted once in native code, where a Buffer frame of more than
 * 128 bytes costs a reference released later on the main thread. Callers pass a value that satisfies the
 * messages.ts schema.
 */
export function signedText(body: object, key: Buffer): [header: string, body: string] {
  const text = JSON.stringify(body);
  return [HEADER_PREFIX + hmacSign(key, text), text];
}

/** The same frames as bytes, for readers of frames (tests, tools that tamper with a message). */
export function encodeMessage(body: object, key: Buffer): [Buffer, Buffer] {
  const [header, text] = signedText(body, key);
  return [Buffer.from(header, 'latin1'), Buffer.from(text, 'utf8')];
}

export type ParsedHeader = { ok: true; signature: string } | { ok: false; detail: string };

const SEMICOLON = 0x3b;
const COLON = 0x3a;
const EQUALS = 0x3d;
const VERSION_KEY = Buffer.from('Version', 'latin1');
const METHOD_KEY = Buffer.from('SigningMethod', 'latin1');
const SIGNATURE_KEY = Buffer.from('Signature', 'latin1');
const VERSION_VALUE = Buffer.from(PROTOCOL_VERSION, 'latin1');
const METHOD_VALUE = Buffer.from(SIGNING_METHOD, 'latin1');

/** Byte-wise compare of frame[start, end) with a short constant; a JS loop beats a native call at these sizes. */
function bytesEqual(frame: Buffer, start: number, end: number, token: Buffer): boolean {
  if (end - start !== token.length) return false;
  for (let i = 0; i < token.length; i++) if (frame[start + i] !== token[i]) return false;
  return true;
}

function isBase64Char(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f;
}

/**
 * Canonical padded base64 of 32 bytes: 43 alphabet characters then `=`, and the last character carries only
 * zero bits where the padding begins (index a multiple of 4), so each digest has exactly one accepted spelling.
 */
function isSignatureText(frame: Buffer, start: number, end: number): boolean {
  if (end - start !== SIGNATURE_B64_LENGTH || frame[end - 1] !== EQUALS) return false;
  for (let i = start; i < end - 1; i++) if (!isBase64Char(frame[i] ?? 0)) return false;
  const last = frame[end - 2] ?? 0;
  const sextet =
    last >= 0x61 ? last - 71 : last >= 0x41 ? last - 0x41 : last >= 0x30 ? last + 4 : last === 0x2b ? 62 : 63;
  return (sextet & 3) === 0;
}

/**
 * Reads `Key:Value` fields separated by `;`, in any order, each exactly once: Version (must be 2.0),
 * SigningMethod (must be hmac_sha256) and Signature. Index arithmetic over the bytes, so the only string made
 * is the signature; this runs for every heartbeat.
 */
export function parseHeader(frame: Buffer): ParsedHeader {
  const length = frame.length;
  if (length === 0) return { ok: false, detail: 'empty header' };
  let sawVersion = false;
  let sawMethod = false;
  let sigStart = -1;
  let sigEnd = -1;
  let pos = 0;
  while (pos <= length) {
    let colon = -1;
    let end = pos;
    for (; end < length; end++) {
      const c = frame[end];
      if (c === SEMICOLON) break;
      if (c === COLON && colon === -1) colon = end;
    }
    if (colon === -1) return { ok: false, detail: 'header field without a colon' };
    const valueStart = colon + 1;
    if (bytesEqual(frame, pos, colon, VERSION_KEY)) {
      if (sawVersion) return { ok: false, detail: 'Version given twice' };
      if (!bytesEqual(frame, valueStart, end, VERSION_VALUE))
        return { ok: false, detail: `unsupported version, expected ${PROTOCOL_VERSION}` };
      sawVersion = true;
    } else if (bytesEqual(frame, pos, colon, METHOD_KEY)) {
      if (sawMethod) return { ok: false, detail: 'SigningMethod given twice' };
      if (!bytesEqual(frame, valueStart, end, METHOD_VALUE))
        return { ok: false, detail: `unsupported signing method, expected ${SIGNING_METHOD}` };
      sawMethod = true;
    } else if (bytesEqual(frame, pos, colon, SIGNATURE_KEY)) {
      if (sigStart !== -1) return { ok: false, detail: 'Signature given twice' };
      if (!isSignatureText(frame, valueStart, end))
        return { ok: false, detail: 'Signature is not the base64 of a 32-byte HMAC' };
      sigStart = valueStart;
      sigEnd = end;
    } else {
      return { ok: false, detail: 'unknown header field' };
    }
    pos = end + 1;
  }
  if (!sawVersion) return { ok: false, detail: 'Version missing' };
  if (!sawMethod) return { ok: false, detail: 'SigningMethod missing' };
  if (sigStart === -1) return { ok: false, detail: 'Signature missing' };
  return { ok: true, signature: frame.toString('latin1', sigStart, sigEnd) };
}
