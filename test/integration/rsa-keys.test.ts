// RSA key helpers: generated pairs work for signing, the three public PEM forms are accepted, anything else is refused.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import {
  generateKeyPair,
  parsePublicKey,
  readPrivateKey,
  toSpkiPem,
  PUBLIC_KEY_CACHE_SIZE,
} from '../../src/auth/rsa-keys.js';
import {
  readAuthHeaders,
  signRequest,
  verifyRequest,
  DEFAULT_AUTH_SKEW_SECONDS,
} from '../../src/auth/signed-headers.js';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Sign with `privatePem` and verify with `publicPem` the way the server does. */
function roundTrip(privatePem: string, publicPem: string): number {
  const now = Date.now();
  const headers = signRequest({
    privateKey: privatePem,
    userId: 'alice',
    method: 'PUT',
    path: '/users/alice',
    body: '{"a":1}',
  });
  const r = readAuthHeaders(
    (name) => Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1],
    now,
    DEFAULT_AUTH_SKEW_SECONDS,
  );
  if (!r.ok) throw new Error(`headers refused: ${JSON.stringify(r.body)}`);
  const key = parsePublicKey(publicPem);
  return key === null ? -2 : verifyRequest(r.auth, [key], 'PUT', '/users/alice', '{"a":1}');
}

t.test('generateKeyPair gives a PKCS#1 private key and an SPKI public key that sign and verify', async (t) => {
  const [a, b] = await Promise.all([generateKeyPair(), generateKeyPair()]);
  t.match(a.privateKeyPem, /^-----BEGIN RSA PRIVATE KEY-----\n/);
  t.match(a.publicKeyPem, /^-----BEGIN PUBLIC KEY-----\n/);
  t.equal(createPublicKey(a.publicKeyPem).asymmetricKeyDetails?.modulusLength, 2048);
  t.equal(createPublicKey(a.publicKeyPem).asymmetricKeyDetails?.publicExponent, 65537n);
  t.not(a.publicKeyPem, b.publicKeyPem, 'each call makes a new key');
  t.equal(roundTrip(a.privateKeyPem, a.publicKeyPem), 0);
  t.equal(roundTrip(a.privateKeyPem, b.publicKeyPem), -1, "another pair's public key does not verify");
});

t.test('parsePublicKey accepts SPKI, PKCS#1 and certificate PEM', async (t) => {
  const pair = await generateKeyPair();
  const spki = parsePublicKey(pair.publicKeyPem);
  t.equal(spki?.asymmetricKeyType, 'rsa');

  const pkcs1 = createPublicKey(pair.publicKeyPem).export({ type: 'pkcs1', format: 'pem' }).toString();
  t.match(pkcs1, /^-----BEGIN RSA PUBLIC KEY-----/);
  t.equal(toSpkiPem(pkcs1), pair.publicKeyPem, 'PKCS#1 normalises to the same SPKI');
  t.equal(roundTrip(pair.privateKeyPem, pkcs1), 0);

  const crlf = `\n  ${pair.publicKeyPem.replace(/\n/g, '\r\n')}  \n`;
  t.equal(toSpkiPem(crlf), pair.publicKeyPem, 'CRLF line ends and surrounding blanks are accepted');

  t.test(
    'certificate',
    { skip: hasOpenssl() ? false : 'openssl is not on PATH, so no certificate can be made' },
    async (t) => {
      const dir = t.testdir({ 'key.pem': pair.privateKeyPem });
      const cert = execFileSync(
        'openssl',
        ['req', '-x509', '-new', '-key', join(dir, 'key.pem'), '-subj', '/CN=infra-server-test', '-days', '1'],
        {
          encoding: 'utf8',
        },
      );
      t.match(cert, /^-----BEGIN CERTIFICATE-----/);
      t.equal(toSpkiPem(cert), pair.publicKeyPem, 'only the public key is taken from the certificate');
      t.equal(roundTrip(pair.privateKeyPem, cert), 0);
    },
  );
});

t.test('parsePublicKey returns null for anything that is not one RSA public key', async (t) => {
  const pair = await generateKeyPair();
  const pkcs8 = createPrivateKey(pair.privateKeyPem).export({ type: 'pkcs8', format: 'pem' }).toString();
  const ec = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const ed = generateKeyPairSync('ed25519', {
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const lines = pair.publicKeyPem.split('\n');
  const junk: Array<[string, unknown]> = [
    ['empty string', ''],
    ['plain text', 'hello'],
    ['a PKCS#1 private key', pair.privateKeyPem],
    ['a PKCS#8 private key', pkcs8],
    ['an EC public key', ec.publicKey],
    ['an Ed25519 public key', ed.publicKey],
    ['a damaged body', pair.publicKeyPem.replace(/[A-Za-z]{8}/, 'AAAAAAAA')],
    ['a truncated body', [...lines.slice(0, 3), ...lines.slice(-2)].join('\n')],
    ['mismatched labels', pair.publicKeyPem.replace('END PUBLIC KEY', 'END RSA PUBLIC KEY')],
    ['two keys', `${pair.publicKeyPem}${pair.publicKeyPem}`],
    ['text before the block', `key: ${pair.publicKeyPem}`],
    ['a huge string', `${pair.publicKeyPem}${' '.repeat(20_000)}`],
    ['a number', 42],
    ['undefined', undefined],
  ];
  for (const [what, input] of junk) {
    // Callers pass stored data; a non-string must still come back null rather than throw.
    t.equal(parsePublicKey(input as string), null, what);
    t.equal(toSpkiPem(input as string), null, `${what} (toSpkiPem)`);
  }
});

t.test('parsePublicKey is memoized by PEM text and the cache is bounded', async (t) => {
  const pair = await generateKeyPair();
  const first = parsePublicKey(pair.publicKeyPem);
  t.ok(first);
  t.equal(parsePublicKey(pair.publicKeyPem), first, 'the same text gives the same KeyObject');
  t.equal(parsePublicKey(pair.publicKeyPem), first, 'and again after a hit');
  // Distinct texts for the same key: trailing blanks spelled as the binary digits of i.
  let refused = 0;
  for (let i = 0; i < PUBLIC_KEY_CACHE_SIZE; i++) {
    const variant = `${pair.publicKeyPem}${i.toString(2).replace(/0/g, ' ').replace(/1/g, '\t')}\n`;
    if (parsePublicKey(variant) === null) refused++;
  }
  t.equal(refused, 0, `${PUBLIC_KEY_CACHE_SIZE} other texts were parsed`);
  const after = parsePublicKey(pair.publicKeyPem);
  t.not(after, first, 'the least recently used entry was evicted and parsed again');
  t.equal(after?.export({ type: 'spki', format: 'pem' }).toString(), pair.publicKeyPem);
});

t.test('readPrivateKey reads PKCS#1 and PKCS#8 RSA keys', async (t) => {
  const pair = await generateKeyPair();
  const pkcs8 = createPrivateKey(pair.privateKeyPem).export({ type: 'pkcs8', format: 'pem' }).toString();
  t.match(pkcs8, /^-----BEGIN PRIVATE KEY-----/);
  for (const pem of [pair.privateKeyPem, pkcs8, `\r\n${pair.privateKeyPem.replace(/\n/g, '\r\n')}`]) {
    const key = readPrivateKey(pem);
    t.equal(key.type, 'private');
    t.equal(createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString(), pair.publicKeyPem);
  }
  t.equal(roundTrip(pkcs8, pair.publicKeyPem), 0, 'a PKCS#8 key signs requests');
});

t.test('readPrivateKey throws a clear error for anything else', async (t) => {
  const pair = await generateKeyPair();
  const ec = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const encrypted = createPrivateKey(pair.privateKeyPem)
    .export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' })
    .toString();
  const lines = pair.privateKeyPem.split('\n');
  t.throws(
    () => readPrivateKey(pair.publicKeyPem),
    { message: /not an RSA private key: expected one PEM block/ },
    'a public key',
  );
  t.throws(() => readPrivateKey('hello'), { message: /not an RSA private key/ }, 'junk');
  t.throws(() => readPrivateKey(''), { message: /not an RSA private key/ }, 'empty');
  t.throws(() => readPrivateKey(ec.privateKey), { message: /key type 'ec'/ }, 'an EC key');
  t.throws(() => readPrivateKey(encrypted), { message: /encrypted/ }, 'an encrypted key');
  t.throws(
    () => readPrivateKey([...lines.slice(0, 4), ...lines.slice(-2)].join('\n')),
    { message: /could not be decoded/ },
    'a truncated key',
  );
});
