// Request signing: the reference 1.8 vectors, canonical paths, header checks in erchef's order, and every way a signature must fail.
import t from 'tap';
import {
  createPublicKey,
  generateKeyPairSync,
  createSecretKey,
  createHash,
  privateEncrypt,
  constants,
  type KeyObject,
} from 'node:crypto';
import {
  canonicalPath,
  canonicalString,
  hashBody,
  parseTimestamp,
  readAuthHeaders,
  signRequest,
  verifyRequest,
  WWW_AUTHENTICATE,
  invalidSignature,
  unknownRequestor,
  SUPPORTED_VERSIONS,
  DEFAULT_AUTH_SKEW_SECONDS,
  type SignVersion,
  type SignOptions,
  type SignedRequestAuth,
  type AuthHeaderResult,
} from '../../src/auth/signed-headers.js';
import { readPrivateKey } from '../../src/auth/rsa-keys.js';

// The 2048-bit test key shared by mixlib-authentication's and chef_authn's specs (reference 1.8).
const PRIVATE_KEY_PEM = `-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEA0ueqo76MXuP6XqZBILFziH/9AI7C6PaN5W0dSvkr9yInyGHS
z/IR1+4tqvP2qlfKVKI4CP6BFH251Ft9qMUBuAsnlAVQ1z0exDtIFFOyQCdR7iXm
jBIWMSS4buBwRQXwDK7id1OxtU23qVJv+xwEV0IzaaSJmaGLIbvRBD+qatfUuQJB
MU/04DdJIwvLtZBYdC2219m5dUBQaa4bimL+YN9EcsDzD9h9UxQo5ReK7b3cNMzJ
BKJWLzFBcJuePMzAnLFktr/RufX4wpXe6XJxoVPaHo72GorLkwnQ0HYMTY8rehT4
mDi1FI969LHCFFaFHSAaRnwdXaQkJmSfcxzCYQIDAQABAoIBAQCW3I4sKN5B9jOe
xq/pkeWBq4OvhW8Ys1yW0zFT8t6nHbB1XrwscQygd8gE9BPqj3e0iIEqtdphbPmj
VHqTYbC0FI6QDClifV7noTwTBjeIOlgZ0NSUN0/WgVzIOxUz2mZ2vBZUovKILPqG
TOi7J7RXMoySMdcXpP1f+PgvYNcnKsT72UcWaSXEV8/zo+Zm/qdGPVWwJonri5Mp
DVm5EQSENBiRyt028rU6ElXORNmoQpVjDVqZ1gipzXkifdjGyENw2rt4V/iKYD7V
5iqXOsvP6Cemf4gbrjunAgDG08S00kiUgvVWcdXW+dlsR2nCvH4DOEe3AYYh/aH8
DxEE7FbtAoGBAPcNO8fJ56mNw0ow4Qg38C+Zss/afhBOCfX4O/SZKv/roRn5+gRM
KRJYSVXNnsjPI1plzqR4OCyOrjAhtuvL4a0DinDzf1+fiztyNohwYsW1vYmqn3ti
EN0GhSgE7ppZjqvLQ3f3LUTxynhA0U+k9wflb4irIlViTUlCsOPkrNJDAoGBANqL
Q+vvuGSsmRLU/Cenjy+Mjj6+QENg51dz34o8JKuVKIPKU8pNnyeLa5fat0qD2MHm
OB9opeQOcw0dStodxr6DB3wi83bpjeU6BWUGITNiWEaZEBrQ0aiqNJJKrrHm8fAZ
9o4l4oHc4hI0kYVYYDuxtKuVJrzZiEapTwoOcYiLAoGBAI/EWbeIHZIj9zOjgjEA
LHvm25HtulLOtyk2jd1njQhlHNk7CW2azIPqcLLH99EwCYi/miNH+pijZ2aHGCXb
/bZrSxM0ADmrZKDxdB6uGCyp+GS2sBxjEyEsfCyvwhJ8b3Q100tqwiNO+d5FCglp
HICx2dgUjuRVUliBwOK93nx1AoGAUI8RhIEjOYkeDAESyhNMBr0LGjnLOosX+/as
qiotYkpjWuFULbibOFp+WMW41vDvD9qrSXir3fstkeIAW5KqVkO6mJnRoT3Knnra
zjiKOITCAZQeiaP8BO5o3pxE9TMqb9VCO3ffnPstIoTaN4syPg7tiGo8k1SklVeH
2S8lzq0CgYAKG2fljIYWQvGH628rp4ZcXS4hWmYohOxsnl1YrszbJ+hzR+IQOhGl
YlkUQYXhy9JixmUUKtH+NXkKX7Lyc8XYw5ETr7JBT3ifs+G7HruDjVG78EJVojbd
8uLA+DdQm5mg4vd1GTiSK65q/3EeoBlUaVor3HhLFki+i9qpT8CBsg==
-----END RSA PRIVATE KEY-----`;

const PUBLIC_KEY_PEM = `-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA0ueqo76MXuP6XqZBILFz
iH/9AI7C6PaN5W0dSvkr9yInyGHSz/IR1+4tqvP2qlfKVKI4CP6BFH251Ft9qMUB
uAsnlAVQ1z0exDtIFFOyQCdR7iXmjBIWMSS4buBwRQXwDK7id1OxtU23qVJv+xwE
V0IzaaSJmaGLIbvRBD+qatfUuQJBMU/04DdJIwvLtZBYdC2219m5dUBQaa4bimL+
YN9EcsDzD9h9UxQo5ReK7b3cNMzJBKJWLzFBcJuePMzAnLFktr/RufX4wpXe6XJx
oVPaHo72GorLkwnQ0HYMTY8rehT4mDi1FI969LHCFFaFHSAaRnwdXaQkJmSfcxzC
YQIDAQAB
-----END PUBLIC KEY-----`;

const USER = 'spec-user';
const BODY = 'Spec Body';
const METHOD = 'POST';
const PATH = '/organizations/clownco';
const TIMESTAMP = '2009-01-01T12:00:00Z';
const TIMESTAMP_MS = Date.UTC(2009, 0, 1, 12, 0, 0);
const SKEW = DEFAULT_AUTH_SKEW_SECONDS;

const privateKey = readPrivateKey(PRIVATE_KEY_PEM);
const publicKey = createPublicKey(PUBLIC_KEY_PEM);
const otherKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });

interface Vector {
  version: SignVersion;
  signHeader: string;
  contentHash: string;
  canonical: string;
  lines: string[];
}

const V1_CANONICAL_HEAD =
  'Method:POST\nHashed Path:YtBWDn1blGGuFIuKksdwXzHU9oE=\nX-Ops-Content-Hash:DFteJZPVv6WKdQmMqZUQUumUyRs=\nX-Ops-Timestamp:2009-01-01T12:00:00Z\n';

const VECTORS: Vector[] = [
  {
    version: '1.0',
    signHeader: 'algorithm=sha1;version=1.0;',
    contentHash: 'DFteJZPVv6WKdQmMqZUQUumUyRs=',
    canonical: `${V1_CANONICAL_HEAD}X-Ops-UserId:spec-user`,
    lines: [
      'jVHrNniWzpbez/eGWjFnO6lINRIuKOg40ZTIQudcFe47Z9e/HvrszfVXlKG4',
      'NMzYZgyooSvU85qkIUmKuCqgG2AIlvYa2Q/2ctrMhoaHhLOCWWoqYNMaEqPc',
      '3tKHE+CfvP+WuPdWk4jv4wpIkAz6ZLxToxcGhXmZbXpk56YTmqgBW2cbbw4O',
      'IWPZDHSiPcw//AYNgW1CCDptt+UFuaFYbtqZegcBd2n/jzcWODA7zL4KWEUy',
      '9q4rlh/+1tBReg60QdsmDRsw/cdO1GZrKtuCwbuD4+nbRdVBKv72rqHX9cu0',
      'utju9jzczCyB+sSAQWrxSsXB/b8vV2qs0l4VD2ML+w==',
    ],
  },
  {
    version: '1.1',
    signHeader: 'algorithm=sha1;version=1.1;',
    contentHash: 'DFteJZPVv6WKdQmMqZUQUumUyRs=',
    canonical: `${V1_CANONICAL_HEAD}X-Ops-UserId:EAF7Wv/hbAudWV5ZkwKz40Z/lO0=`,
    lines: [
      'UfZD9dRz6rFu6LbP5Mo1oNHcWYxpNIcUfFCffJS1FQa0GtfU/vkt3/O5HuCM',
      '1wIFl/U0f5faH9EWpXWY5NwKR031Myxcabw4t4ZLO69CIh/3qx1XnjcZvt2w',
      'c2R9bx/43IWA/r8w8Q6decuu0f6ZlNheJeJhaYPI8piX/aH+uHBH8zTACZu8',
      'vMnl5MF3/OIlsZc8cemq6eKYstp8a8KYq9OmkB5IXIX6qVMJHA6fRvQEB/7j',
      '281Q7oI/O+lE8AmVyBbwruPb7Mp6s4839eYiOdjbDwFjYtbS3XgAjrHlaD7W',
      'FDlbAG7H8Dmvo+wBxmtNkszhzbBnEYtuwQqT8nM/8A==',
    ],
  },
  {
    version: '1.2',
    signHeader: 'version=1.2',
    contentHash: 'DFteJZPVv6WKdQmMqZUQUumUyRs=',
    canonical: `${V1_CANONICAL_HEAD}X-Ops-UserId:EAF7Wv/hbAudWV5ZkwKz40Z/lO0=`,
    lines: [
      'HtjhPysvmPf7mFHZ+Ze4rLMucDv4ImPxv5kdJghpVwLo9tuE6VSmbuh3tIBp',
      'OmVH1sKOqyv6x5fkLaHq0FIYTEgcdXrN86rkFJBvExRzOuL7JHGXKIIzohc9',
      'BZBcF2LAGv2UY33TMXLhQYIIKh/5uWYZ7QsHjadgWo5nEiFpiy5VCoMKidmr',
      'DH7jYUZeXCFMgfsLlN6mlilc/iAGnktJwhAQPvIDgJS1cOHqFeWzaU2FRjvQ',
      'h6AUrsvhJ6C/5uJu6h0DT4uk5w5uVameyI/Cs+0KI/XLCk27dOl4X+SqBN9D',
      'FDp0m8rzMtOdsPkO/IAgbdpHTWoh8AXmPhh8t6+PfQ==',
    ],
  },
  {
    version: '1.3',
    signHeader: 'algorithm=sha256;version=1.3;',
    contentHash: 'hDlKNZhIhgso3Fs0S0pZwJ0xyBWtR1RBaeHs1DrzOho=',
    canonical:
      'Method:POST\nPath:/organizations/clownco\nX-Ops-Content-Hash:hDlKNZhIhgso3Fs0S0pZwJ0xyBWtR1RBaeHs1DrzOho=\nX-Ops-Sign:version=1.3\nX-Ops-Timestamp:2009-01-01T12:00:00Z\nX-Ops-UserId:spec-user\nX-Ops-Server-API-Version:1',
    lines: [
      'FZOmXAyOBAZQV/uw188iBljBJXOm+m8xQ/8KTGLkgGwZNcRFxk1m953XjE3W',
      'VGy1dFT76KeaNWmPCNtDmprfH2na5UZFtfLIKrPv7xm80V+lzEzTd9WBwsfP',
      '42dZ9N+V9I5SVfcL/lWrrlpdybfceJC5jOcP5tzfJXWUITwb6Z3Erg3DU3Uh',
      'H9h9E0qWlYGqmiNCVrBnpe6Si1gU/Jl+rXlRSNbLJ4GlArAPuL976iTYJTzE',
      'MmbLUIm3JRYi00Yb01IUCCKdI90vUq1HHNtlTEu93YZfQaJwRxXlGkCNwIJe',
      'fy49QzaCIEu1XiOx5Jn+4GmkrZch/RrK9VzQWXgs+w==',
    ],
  },
];

/** Headers as a client sends them (names in any case), looked up the way the server does. */
function headerFn(headers: Record<string, string | undefined>): (name: string) => string | undefined {
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return (name) => lower.get(name);
}

function vectorHeaders(v: Vector): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {
    'X-OPS-SIGN': v.signHeader,
    'X-OPS-USERID': USER,
    'X-OPS-TIMESTAMP': TIMESTAMP,
    'X-OPS-CONTENT-HASH': v.contentHash,
    'X-OPS-SERVER-API-VERSION': '1',
  };
  for (const [i, line] of v.lines.entries()) headers[`X-OPS-AUTHORIZATION-${i + 1}`] = line;
  return headers;
}

function read(headers: Record<string, string | undefined>, nowMs = TIMESTAMP_MS): AuthHeaderResult {
  return readAuthHeaders(headerFn(headers), nowMs, SKEW);
}

function readOk(headers: Record<string, string | undefined>): SignedRequestAuth {
  const r = read(headers);
  if (!r.ok) throw new Error(`expected the headers to be accepted, got ${r.status} ${JSON.stringify(r.body)}`);
  return r.auth;
}

function specHeaders(version: SignVersion, extra: Partial<SignOptions> = {}): Record<string, string | undefined> {
  return signRequest({
    privateKey,
    userId: USER,
    method: METHOD,
    path: PATH,
    body: BODY,
    version,
    timestamp: TIMESTAMP,
    serverApiVersion: 1,
    ...extra,
  });
}

t.test('hashes of the spec inputs match the reference', async (t) => {
  t.equal(hashBody(BODY, '1.0'), 'DFteJZPVv6WKdQmMqZUQUumUyRs=');
  t.equal(hashBody(Buffer.from(BODY), '1.1'), 'DFteJZPVv6WKdQmMqZUQUumUyRs=');
  t.equal(hashBody(BODY, '1.3'), 'hDlKNZhIhgso3Fs0S0pZwJ0xyBWtR1RBaeHs1DrzOho=');
  t.equal(hashBody('', '1.0'), '2jmj7l5rSw0yVb/vlWAYkK/YBwk=', 'GET and DELETE sign the empty body');
});

for (const v of VECTORS) {
  t.test(`version ${v.version} test vector`, async (t) => {
    const canonical = canonicalString({
      version: v.version,
      method: 'post',
      path: PATH,
      contentHash: v.contentHash,
      timestamp: TIMESTAMP,
      userId: USER,
      serverApiVersion: 1,
    });
    t.equal(canonical, v.canonical, 'canonical string is byte-exact');

    const signed = signRequest({
      privateKey,
      userId: USER,
      method: METHOD,
      path: PATH,
      body: BODY,
      version: v.version,
      timestamp: TIMESTAMP,
      serverApiVersion: 1,
    });
    const lines = Object.keys(signed)
      .filter((k) => k.startsWith('X-Ops-Authorization-'))
      .map((k) => signed[k]);
    t.same(lines, v.lines, 'X-Ops-Authorization-1..6 are exactly the reference lines');
    t.equal(signed['X-Ops-Authorization-7'], undefined, 'no seventh line for a 2048-bit key');
    t.equal(signed['X-Ops-Content-Hash'], v.contentHash);
    t.equal(signed['X-Ops-Userid'], USER);
    t.equal(signed['X-Ops-Timestamp'], TIMESTAMP);
    t.equal(signed['X-Ops-Sign'], `algorithm=${v.version === '1.3' ? 'sha256' : 'sha1'};version=${v.version}`);
    t.equal(signed['X-Ops-Server-API-Version'], '1');

    const fromReference = readOk(vectorHeaders(v));
    t.equal(fromReference.version, v.version);
    t.equal(verifyRequest(fromReference, [publicKey], METHOD, PATH, BODY), 0, 'the reference signature verifies');
    t.equal(
      verifyRequest(readOk(signed), [publicKey], METHOD, PATH, Buffer.from(BODY)),
      0,
      'our own signature verifies',
    );
  });
}

t.test('canonical path table (chef_authn canonical_path_test_)', async (t) => {
  const table: Array<[string, string]> = [
    ['/', '/'],
    ['////', '/'],
    ['/a/b/c/', '/a/b/c'],
    ['//a/b///c///', '/a/b/c'],
    ['/a/b/c?a=1&b=2', '/a/b/c'],
    ['/organizations/clownco', '/organizations/clownco'],
    ['/?x=1', '/'],
  ];
  for (const [input, expected] of table) t.equal(canonicalPath(input), expected, `${input} -> ${expected}`);
});

t.test('a request signed for a different path, method, body or key is refused', async (t) => {
  for (const version of SUPPORTED_VERSIONS) {
    const auth = readOk(specHeaders(version));
    t.equal(verifyRequest(auth, [publicKey], METHOD, '/organizations/other', BODY), -1, `${version}: wrong path`);
    t.equal(verifyRequest(auth, [publicKey], 'PUT', PATH, BODY), -1, `${version}: wrong method`);
    t.equal(verifyRequest(auth, [publicKey], METHOD, PATH, 'Spec Body!'), -1, `${version}: wrong body`);
    t.equal(verifyRequest(auth, [otherKeys.publicKey], METHOD, PATH, BODY), -1, `${version}: wrong key`);
    t.equal(verifyRequest(auth, [], METHOD, PATH, BODY), -1, `${version}: no keys`);
  }
});

t.test('equivalent paths and method case still verify', async (t) => {
  for (const version of SUPPORTED_VERSIONS) {
    const auth = readOk(specHeaders(version, { method: 'post', path: '//organizations//clownco/' }));
    t.equal(verifyRequest(auth, [publicKey], 'POST', '/organizations/clownco?x=1', BODY), 0, version);
  }
});

t.test('a content-hash header that differs from the body is refused even when the signature is good', async (t) => {
  for (const v of VECTORS) {
    const auth = readOk({ ...vectorHeaders(v), 'X-OPS-CONTENT-HASH': `${v.contentHash}_` });
    t.equal(verifyRequest(auth, [publicKey], METHOD, PATH, BODY), -1, v.version);
  }
});

t.test('a signature with one authorization line missing is refused', async (t) => {
  for (const v of VECTORS) {
    const lastMissing = readOk({ ...vectorHeaders(v), 'X-OPS-AUTHORIZATION-6': undefined });
    t.equal(verifyRequest(lastMissing, [publicKey], METHOD, PATH, BODY), -1, `${v.version}: last line missing`);
    // Lines after a gap are ignored, as erchef stops at the first missing index.
    const middleMissing = readOk({ ...vectorHeaders(v), 'X-OPS-AUTHORIZATION-3': undefined });
    t.equal(middleMissing.signature.length, 90, `${v.version}: only lines 1-2 are read`);
    t.equal(verifyRequest(middleMissing, [publicKey], METHOD, PATH, BODY), -1, `${v.version}: middle line missing`);
  }
});

t.test('an "epicfail" signature is refused (mixlib spec)', async (t) => {
  for (const v of VECTORS) {
    const headers = vectorHeaders(v);
    for (let i = 2; i <= 6; i++) headers[`X-OPS-AUTHORIZATION-${i}`] = undefined;
    const auth = readOk({ ...headers, 'X-OPS-AUTHORIZATION-1': 'epicfail' });
    t.equal(verifyRequest(auth, [publicKey], METHOD, PATH, BODY), -1, v.version);
  }
});

t.test('verification returns the index of the first key that verifies', async (t) => {
  const auth = readOk(specHeaders('1.3'));
  t.equal(verifyRequest(auth, [otherKeys.publicKey, publicKey], METHOD, PATH, BODY), 1);
  t.equal(verifyRequest(auth, [publicKey, otherKeys.publicKey, publicKey], METHOD, PATH, BODY), 0);
  t.equal(
    verifyRequest(auth, [privateKey], METHOD, PATH, BODY),
    0,
    'a private KeyObject verifies through its public half',
  );
});

t.test('missing or empty required headers give 400 naming them in erchef order', async (t) => {
  const names: Array<[string, string]> = [
    ['X-OPS-USERID', 'X-Ops-UserId'],
    ['X-OPS-TIMESTAMP', 'X-Ops-Timestamp'],
    ['X-OPS-SIGN', 'X-Ops-Sign'],
    ['X-OPS-CONTENT-HASH', 'X-Ops-Content-Hash'],
  ];
  for (const [sent, label] of names) {
    for (const value of [undefined, '']) {
      const r = read({ ...specHeaders('1.3'), [sent]: value });
      t.same(
        r,
        { ok: false, status: 400, body: { error: [`missing required authentication header(s) '${label}'`] } },
        `${label} ${value === undefined ? 'missing' : 'empty'}`,
      );
    }
  }
  const r = read({ 'X-OPS-SIGN': 'version=1.3', 'X-OPS-AUTHORIZATION-1': 'abcd' });
  t.same(r, {
    ok: false,
    status: 400,
    body: {
      error: ["missing required authentication header(s) 'X-Ops-UserId', 'X-Ops-Timestamp', 'X-Ops-Content-Hash'"],
    },
  });
});

t.test('a missing or empty X-Ops-Authorization-1 is an invalid signature with WWW-Authenticate', async (t) => {
  for (const value of [undefined, '']) {
    const r = read({ ...specHeaders('1.1'), 'X-Ops-Authorization-1': value });
    t.same(r, {
      ok: false,
      status: 401,
      body: { error: ["Invalid signature for user or client 'spec-user'"] },
      wwwAuthenticate: true,
    });
  }
  t.equal(WWW_AUTHENTICATE, 'X-Ops-Sign version="1.0" version="1.1" version="1.2" version="1.3"');
});

t.test('401 bodies the server sends after looking up keys match the reference', async (t) => {
  t.same(invalidSignature('bob'), {
    ok: false,
    status: 401,
    body: { error: ["Invalid signature for user or client 'bob'"] },
    wwwAuthenticate: true,
  });
  t.same(unknownRequestor('bob'), {
    ok: false,
    status: 401,
    body: { error: ["Failed to authenticate as 'bob'. Ensure that your node_name and client key are correct."] },
  });
});

t.test('timestamps other than YYYY-MM-DDTHH:MM:SSZ give 401 bad header', async (t) => {
  const bad = [
    '2009-01-01T12:00:00+00:00',
    '2009-01-01T12:00:00.000Z',
    '2009-01-01T12:00:00',
    '2009-01-01 12:00:00Z',
    'Thu, 01 Jan 2009 12:00:00 GMT',
    '2009-13-01T12:00:00Z',
    '2009-02-30T12:00:00Z',
    '2009-01-01T24:00:00Z',
    '1230811200',
  ];
  for (const ts of bad) {
    t.same(
      read({ ...specHeaders('1.3'), 'X-OPS-TIMESTAMP': ts }),
      { ok: false, status: 401, body: { error: ["bad header(s) 'X-Ops-Timestamp'"] } },
      ts,
    );
  }
});

t.test('clock skew must be strictly under the limit', async (t) => {
  const skewed = {
    ok: false,
    status: 401,
    body: { error: ['Failed to authenticate as spec-user. Synchronize the clock on your host.'] },
  };
  const headers = specHeaders('1.3');
  t.ok(read(headers, TIMESTAMP_MS + (SKEW - 1) * 1000).ok, 'one second inside the limit, server ahead');
  t.ok(read(headers, TIMESTAMP_MS - (SKEW - 1) * 1000).ok, 'one second inside the limit, server behind');
  t.ok(read(headers, TIMESTAMP_MS + SKEW * 1000 - 1).ok, 'the server clock counts whole seconds');
  t.same(read(headers, TIMESTAMP_MS + SKEW * 1000), skewed, 'exactly at the limit');
  t.same(read(headers, TIMESTAMP_MS - SKEW * 1000), skewed, 'exactly at the limit, in the past');
  t.same(read(headers, TIMESTAMP_MS + 86_400_000), skewed, 'a day later');
  t.same(readAuthHeaders(headerFn(headers), TIMESTAMP_MS + 61_000, 60), skewed, 'the skew is a parameter');
});

t.test('X-Ops-Sign: unsupported versions and explicit algorithm mismatches give 400', async (t) => {
  const unsupported = { ok: false, status: 400, body: { error: ['Unsupported authentication protocol version'] } };
  for (const sign of [
    'version=2.0',
    'version=1.4',
    'algorithm=sha1',
    'Version=1.0',
    'version = 1.3',
    'algorithm=sha1;version=1.3',
    'algorithm=sha256;version=1.0',
    'algorithm=SHA1;version=1.1',
    'algorithm=sha512;version=1.3',
  ]) {
    t.same(read({ ...specHeaders('1.3'), 'X-OPS-SIGN': sign }), unsupported, sign);
  }
});

t.test('X-Ops-Sign: the algorithm defaults from the version', async (t) => {
  const go = readOk({ ...specHeaders('1.3'), 'X-OPS-SIGN': 'version=1.3' });
  t.equal(go.algorithm, 'sha256', 'go-chef sends version=1.3 with no algorithm');
  t.equal(verifyRequest(go, [publicKey], METHOD, PATH, BODY), 0);
  const chefAuthn = readOk({ ...specHeaders('1.0'), 'X-OPS-SIGN': 'version=1.0' });
  t.equal(chefAuthn.algorithm, 'sha1');
  t.equal(verifyRequest(chefAuthn, [publicKey], METHOD, PATH, BODY), 0);
  const extras = readOk({ ...specHeaders('1.1'), 'X-OPS-SIGN': 'algorithm=sha1;version=1.1;;junk;a=b=c' });
  t.equal(extras.version, '1.1', 'parts that are not key=value are ignored');
});

t.test('X-Ops-Server-API-Version outside 0..2 or not an integer gives 406 before anything else', async (t) => {
  for (const raw of ['abc', '3', '-1', '1.5', '', '99999999999999999999']) {
    const r = read({ 'X-OPS-SERVER-API-VERSION': raw });
    t.same(
      r,
      {
        ok: false,
        status: 406,
        body: {
          error: 'invalid-x-ops-server-api-version',
          message: `Specified version ${raw} not supported`,
          min_version: 0,
          max_version: 2,
        },
      },
      JSON.stringify(raw),
    );
  }
  for (const [raw, expected] of [
    ['0', 0],
    ['2', 2],
    ['01', 1],
    [undefined, 0],
  ] as const) {
    const r = read({ ...specHeaders('1.1'), 'X-OPS-SERVER-API-VERSION': raw });
    t.equal(r.ok && r.auth.serverApiVersion, expected, `${String(raw)} reads as ${expected}`);
  }
});

t.test('the server API version is part of the 1.3 signature', async (t) => {
  const signedFor2 = readOk({ ...specHeaders('1.3', { serverApiVersion: 2 }), 'X-OPS-SERVER-API-VERSION': '1' });
  t.equal(verifyRequest(signedFor2, [publicKey], METHOD, PATH, BODY), -1, 'header changed after signing');
  const absent = readOk({ ...specHeaders('1.3', { serverApiVersion: 0 }), 'X-OPS-SERVER-API-VERSION': undefined });
  t.equal(verifyRequest(absent, [publicKey], METHOD, PATH, BODY), 0, 'an absent header signs as 0');
  const padded = readOk({ ...specHeaders('1.3'), 'X-OPS-SERVER-API-VERSION': '01' });
  t.equal(verifyRequest(padded, [publicKey], METHOD, PATH, BODY), 0, 'erchef canonicalises 01 to 1');
  const v11 = readOk({ ...specHeaders('1.1', { serverApiVersion: 2 }), 'X-OPS-SERVER-API-VERSION': '0' });
  t.equal(verifyRequest(v11, [publicKey], METHOD, PATH, BODY), 0, '1.0-1.2 do not sign it');
});

t.test('checks run in erchef order', async (t) => {
  const r406 = read({ 'X-OPS-SERVER-API-VERSION': '7', 'X-OPS-SIGN': 'version=9' });
  t.equal(!r406.ok && r406.status, 406, 'API version before missing headers');
  const r400 = read({ ...specHeaders('1.3'), 'X-OPS-USERID': undefined, 'X-OPS-TIMESTAMP': 'yesterday' });
  t.equal(!r400.ok && r400.status, 400, 'missing headers before the timestamp');
  // chef_authn validate_headers checks the clock before the sign description.
  const badTime = read({ ...specHeaders('1.3'), 'X-OPS-TIMESTAMP': 'yesterday', 'X-OPS-SIGN': 'version=9' });
  t.same(
    !badTime.ok && badTime.body,
    { error: ["bad header(s) 'X-Ops-Timestamp'"] },
    'timestamp format before X-Ops-Sign',
  );
  const skewed = read({ ...specHeaders('1.3'), 'X-OPS-SIGN': 'version=9' }, TIMESTAMP_MS + 3_600_000);
  t.equal(!skewed.ok && skewed.status, 401, 'skew before X-Ops-Sign');
  const noSig = read({ ...specHeaders('1.3'), 'X-OPS-SIGN': 'version=9', 'X-Ops-Authorization-1': undefined });
  t.equal(!noSig.ok && noSig.status, 400, 'X-Ops-Sign before a missing signature');
});

/** A 1.0/1.1 signature whose first byte is zero, re-encoded without it as go-chef's signer does. */
function shortSignature(version: '1.0' | '1.1'): { auth: SignedRequestAuth; path: string } | null {
  for (let i = 0; i < 20_000; i++) {
    const path = `/organizations/clownco/nodes/n${i}`;
    const canonical = canonicalString({
      version,
      method: METHOD,
      path,
      contentHash: hashBody(BODY, version),
      timestamp: TIMESTAMP,
      userId: USER,
      serverApiVersion: 0,
    });
    const sig = privateEncrypt({ key: privateKey, padding: constants.RSA_PKCS1_PADDING }, Buffer.from(canonical));
    if (sig[0] !== 0) continue;
    const headers = specHeaders(version, { path });
    const b64 = sig.subarray(1).toString('base64');
    for (let n = 1; headers[`X-Ops-Authorization-${n}`] !== undefined; n++)
      headers[`X-Ops-Authorization-${n}`] = undefined;
    for (let n = 0; n * 60 < b64.length; n++) headers[`X-Ops-Authorization-${n + 1}`] = b64.slice(n * 60, n * 60 + 60);
    return { auth: readOk(headers), path };
  }
  return null;
}

t.test('a 1.0/1.1 signature shorter than the modulus (go-chef) is accepted', async (t) => {
  for (const version of ['1.0', '1.1'] as const) {
    const found = shortSignature(version);
    if (found === null) throw new Error('no signature with a leading zero byte in 20000 tries');
    t.equal(found.auth.signature.length, 255, `${version}: the signature is one byte short`);
    t.equal(verifyRequest(found.auth, [publicKey], METHOD, found.path, BODY), 0, `${version}: it verifies`);
    t.equal(verifyRequest(found.auth, [publicKey], METHOD, PATH, BODY), -1, `${version}: and still binds the path`);
  }
});

t.test('signing', async (t) => {
  t.test('defaults: version 1.3, API version 1, current time', async (t) => {
    const before = Date.now();
    const h = signRequest({ privateKey: PRIVATE_KEY_PEM, userId: 'pivotal', method: 'get', path: '/users' });
    t.equal(h['X-Ops-Sign'], 'algorithm=sha256;version=1.3');
    t.equal(h['X-Ops-Server-API-Version'], '1');
    t.equal(h['X-Ops-Content-Hash'], hashBody('', '1.3'), 'no body means the empty string');
    t.match(h['X-Ops-Timestamp'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const auth = readAuthHeaders(headerFn(h), before, SKEW);
    t.ok(auth.ok && verifyRequest(auth.auth, [publicKey], 'GET', '/users', '') === 0, 'the server accepts it now');
  });

  t.test('signature lines are 60 characters except the last', async (t) => {
    const big = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const h = signRequest({
      privateKey: big.privateKey,
      userId: USER,
      method: METHOD,
      path: PATH,
      body: BODY,
      timestamp: TIMESTAMP,
    });
    const lines = Object.keys(h)
      .filter((k) => k.startsWith('X-Ops-Authorization-'))
      .map((k) => h[k] ?? '');
    t.same(
      lines.map((l) => l.length),
      [60, 60, 52],
      'a 1024-bit signature is 172 base64 characters',
    );
    t.equal(verifyRequest(readOk(h), [big.publicKey], METHOD, PATH, BODY), 0);
  });

  t.test('a long user id cannot be signed with 1.0 but can with 1.1 (mixlib spec)', async (t) => {
    const userId = 'x'.repeat(200);
    t.throws(
      () => signRequest({ privateKey, userId, method: METHOD, path: PATH, version: '1.0', timestamp: TIMESTAMP }),
      /too long for this key; use version 1\.1 or 1\.3/,
    );
    const h = signRequest({ privateKey, userId, method: METHOD, path: PATH, version: '1.1', timestamp: TIMESTAMP });
    t.equal(verifyRequest(readOk(h), [publicKey], METHOD, PATH, ''), 0);
  });

  t.test('bad options are refused clearly', async (t) => {
    t.throws(
      () =>
        signRequest({ privateKey, userId: USER, method: METHOD, path: PATH, timestamp: '2009-01-01T12:00:00.000Z' }),
      /YYYY-MM-DDTHH:MM:SSZ/,
    );
    t.throws(
      () => signRequest({ privateKey, userId: USER, method: METHOD, path: PATH, serverApiVersion: 1.5 }),
      /integer/,
    );
    t.throws(
      () => signRequest({ privateKey: 'not a key', userId: USER, method: METHOD, path: PATH }),
      /not an RSA private key/,
    );
  });
});

/** Deterministic pseudo-random bytes so a failure can be replayed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 2246822519) + 0x9e3779b9) >>> 0;
    return s;
  };
}

t.test('garbage never throws', async (t) => {
  const next = prng(7);
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const secret = createSecretKey(Buffer.alloc(32, 1));
  const keys: KeyObject[] = [ec.publicKey, secret, otherKeys.publicKey, publicKey];
  const alphabet = 'ABCxyz019+/=-_; .:?\u00e9\u0000\n';
  const junk = (len: number): string => Array.from({ length: len }, () => alphabet[next() % alphabet.length]).join('');
  let failures = 0;
  for (let i = 0; i < 300; i++) {
    const version = SUPPORTED_VERSIONS[next() % 4] ?? '1.3';
    const headers: Record<string, string> = {
      'X-OPS-SIGN': next() % 2 === 0 ? `version=${version}` : junk(next() % 20),
      'X-OPS-USERID': junk(next() % 300),
      'X-OPS-TIMESTAMP': next() % 2 === 0 ? TIMESTAMP : junk(20),
      'X-OPS-CONTENT-HASH': junk(next() % 50),
      'X-OPS-SERVER-API-VERSION': next() % 2 === 0 ? '1' : junk(3),
    };
    const lineCount = next() % 10;
    for (let n = 1; n <= lineCount; n++) headers[`X-OPS-AUTHORIZATION-${n}`] = junk(next() % 80);
    const r = readAuthHeaders(headerFn(headers), TIMESTAMP_MS, SKEW);
    if (!r.ok) continue;
    const bodies = [junk(next() % 100), Buffer.from(junk(10))];
    for (const body of bodies) {
      if (verifyRequest(r.auth, keys, junk(5), junk(next() % 40), body) !== -1) failures++;
      const matching = { ...r.auth, contentHash: hashBody(body, r.auth.version) };
      if (verifyRequest(matching, keys, METHOD, PATH, body) !== -1) failures++;
    }
  }
  t.equal(failures, 0, 'no random request verifies');
  const good = readOk(specHeaders('1.3'));
  const odd: SignedRequestAuth[] = [
    { ...good, signature: Buffer.alloc(0) },
    { ...good, signature: Buffer.alloc(512, 0xff) },
    { ...good, signature: Buffer.alloc(256, 0xff) },
    { ...good, algorithm: 'sha1' },
    { ...good, timestamp: '' },
    { ...good, serverApiVersion: Number.NaN },
  ];
  for (const auth of odd) t.equal(verifyRequest(auth, keys, METHOD, PATH, BODY), -1);
  t.equal(
    verifyRequest(JSON.parse('{"version":"9.9","signature":null}'), keys, METHOD, PATH, BODY),
    -1,
    'a malformed auth object',
  );
});

t.test('timestamps and hashed paths read again, or in turn, give the same answers as read first', async (t) => {
  const a = '2026-11-26T00:20:00Z';
  const b = '2026-11-26T00:20:01Z';
  for (const ts of [a, a, b, 'not a time', b, a]) {
    const expected = ts === a ? 1795652400 : ts === b ? 1795652401 : null;
    t.equal(parseTimestamp(ts), expected, ts);
  }
  const request = { method: 'GET', contentHash: 'h', timestamp: a, serverApiVersion: 1, version: '1.1' as const };
  const sha1 = (text: string) => createHash('sha1').update(text).digest('base64');
  for (const [path, userId] of [
    ['/organizations/a', 'alice'],
    ['/organizations/b', 'bob'],
    ['/organizations/a', 'bob'],
    ['/organizations/a', 'alice'],
  ] as const) {
    const lines = canonicalString({ ...request, path, userId }).split('\n');
    t.equal(lines[1], `Hashed Path:${sha1(path)}`, `${path}: its own hashed path`);
    t.equal(lines[4], `X-Ops-UserId:${sha1(userId)}`, `${userId}: its own hashed user id`);
  }
});
