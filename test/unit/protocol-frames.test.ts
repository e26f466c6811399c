// Header and body frames: what encodeMessage writes, and every header parseHeader must refuse.
import t, { type Test } from 'tap';
import {
  DEFAULT_MAX_BODY_SIZE,
  encodeMessage,
  MAX_HEADER_SIZE,
  parseHeader,
  PROTOCOL_VERSION,
  signedText,
} from '../../src/protocol/frames.js';
import { hmacSign, hmacVerify, newSessionKey } from '../../src/protocol/signing.js';

const key = newSessionKey();
const body = { type: 'run', org: 'acme', node: 'web01', job_id: 'j1', note: 'ünïcode ✓' };
const [header, bodyFrame] = encodeMessage(body, key);
const sig = hmacSign(key, bodyFrame);

function refused(t: Test, text: string, detail: RegExp, label: string): void {
  const r = parseHeader(Buffer.from(text, 'latin1'));
  t.equal(r.ok, false, label);
  if (!r.ok) t.match(r.detail, detail, `${label}: says why`);
}

t.test('the protocol constants', async (t) => {
  t.equal(PROTOCOL_VERSION, '2.0');
  t.equal(MAX_HEADER_SIZE, 2048);
  t.equal(DEFAULT_MAX_BODY_SIZE, 65536);
});

t.test('encodeMessage writes the version-2.0 header and the body as UTF-8 JSON, signed as sent', async (t) => {
  t.equal(header.toString('latin1'), `Version:2.0;SigningMethod:hmac_sha256;Signature:${sig}`);
  t.same(JSON.parse(bodyFrame.toString('utf8')), body);
  t.equal(bodyFrame.toString('utf8'), JSON.stringify(body), 'the JSON text is sent as serialized, no re-formatting');
  t.ok(hmacVerify(key, bodyFrame, sig));
});

t.test('signedText gives the same frames as text, signed over the UTF-8 bytes zeromq sends for it', async (t) => {
  const [headerText, bodyText] = signedText(body, key);
  t.equal(headerText, header.toString('latin1'));
  t.equal(bodyText, JSON.stringify(body));
  t.ok(hmacVerify(key, Buffer.from(bodyText, 'utf8'), sig), 'the non-ASCII body verifies as its UTF-8 bytes');
});

t.test('parseHeader returns the signature of a header encodeMessage wrote', async (t) => {
  t.same(parseHeader(header), { ok: true, signature: sig });
});

t.test('parseHeader accepts the three fields in any order', async (t) => {
  const text = `Signature:${sig};Version:2.0;SigningMethod:hmac_sha256`;
  t.same(parseHeader(Buffer.from(text, 'latin1')), { ok: true, signature: sig });
});

t.test('parseHeader refuses each header defect with its own detail', async (t) => {
  const ok = { v: 'Version:2.0', m: 'SigningMethod:hmac_sha256', s: `Signature:${sig}` };
  refused(t, '', /empty/, 'an empty frame');
  refused(t, 'garbage', /colon/, 'no fields at all');
  refused(t, `${ok.v};${ok.m};${ok.s};`, /colon/, 'a trailing semicolon');
  refused(t, `${ok.v};;${ok.m};${ok.s}`, /colon/, 'an empty field');
  refused(t, `Version:1.0;${ok.m};${ok.s}`, /unsupported version/, 'version 1.0');
  refused(t, `Version:2.00;${ok.m};${ok.s}`, /unsupported version/, 'version 2.00');
  refused(t, `${ok.m};${ok.s}`, /Version missing/, 'no version');
  refused(
    t,
    `${ok.v};SigningMethod:rsa2048_sha1;${ok.s}`,
    /signing method/,
    'the RSA heartbeat method of the original',
  );
  refused(t, `${ok.v};${ok.s}`, /SigningMethod missing/, 'no signing method');
  refused(t, `${ok.v};${ok.m}`, /Signature missing/, 'no signature');
  refused(t, `${ok.v};${ok.m};SignedChecksum:${sig}`, /unknown header field/, 'the legacy SignedChecksum field');
  refused(t, `${ok.v};${ok.v};${ok.m};${ok.s}`, /Version given twice/, 'a repeated version');
  refused(t, `${ok.v};${ok.m};${ok.m};${ok.s}`, /SigningMethod given twice/, 'a repeated method');
  refused(t, `${ok.v};${ok.m};${ok.s};${ok.s}`, /Signature given twice/, 'a repeated signature');
  refused(t, `version:2.0;${ok.m};${ok.s}`, /unknown header field/, 'a key in the wrong case');
  refused(t, `${ok.v};${ok.m};Signature:${sig.slice(0, -1)}`, /base64/, 'a signature one character short');
  refused(t, `${ok.v};${ok.m};Signature:${sig}A`, /base64/, 'a signature one character long');
  refused(t, `${ok.v};${ok.m};Signature:${sig.slice(0, -1)}A`, /base64/, 'a signature without its padding');
  refused(t, `${ok.v};${ok.m};Signature:*${sig.slice(1)}`, /base64/, 'a signature with a non-base64 character');
  refused(t, `${ok.v};${ok.m};Signature: ${sig.slice(1)}`, /base64/, 'a signature with a space');
  // The second-to-last character may only carry zero bits below the padding: 'B' is 'A' plus one stray bit.
  const canonical = `${'A'.repeat(42)}A=`;
  t.same(parseHeader(Buffer.from(`${ok.v};${ok.m};Signature:${canonical}`, 'latin1')), {
    ok: true,
    signature: canonical,
  });
  refused(t, `${ok.v};${ok.m};Signature:${'A'.repeat(42)}B=`, /base64/, 'a non-canonical spelling of a valid digest');
});

t.test('parseHeader never throws on arbitrary bytes', async (t) => {
  let seed = 7;
  const next = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed;
  };
  let refusedCount = 0;
  for (let i = 0; i < 2000; i++) {
    const frame = Buffer.alloc(next() % 120);
    for (let j = 0; j < frame.length; j++) frame[j] = next() % 256;
    if (!parseHeader(frame).ok) refusedCount += 1;
  }
  t.equal(refusedCount, 2000, 'random bytes are never a valid header');
});
