// Message HMACs (RFC 4231 vector, every way a signature must fail) and the RSA-OAEP wrapping of session keys.
import t from 'tap';
import { constants, generateKeyPairSync, publicEncrypt } from 'node:crypto';
import {
  decryptSessionKey,
  encryptSessionKey,
  hmacSign,
  hmacVerify,
  newSessionKey,
  SessionKeyError,
  SIGNATURE_B64_LENGTH,
} from '../../src/protocol/signing.js';

const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });

t.test('hmacSign matches RFC 4231 test case 2', async (t) => {
  const expected = Buffer.from('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843', 'hex').toString(
    'base64',
  );
  t.equal(hmacSign(Buffer.from('Jefe'), Buffer.from('what do ya want for nothing?')), expected);
});

t.test('hmacVerify accepts the signature of the body and refuses every alteration', async (t) => {
  const key = newSessionKey();
  const body = Buffer.from('{"type":"heartbeat","org":"acme","node":"web01"}');
  const sig = hmacSign(key, body);
  t.equal(sig.length, SIGNATURE_B64_LENGTH);
  t.ok(hmacVerify(key, body, sig));

  const flipped = Buffer.from(body);
  flipped[5] = (flipped[5] ?? 0) ^ 1;
  t.notOk(hmacVerify(key, flipped, sig), 'one flipped bit in the body');
  t.notOk(hmacVerify(newSessionKey(), body, sig), 'another key');
  t.notOk(hmacVerify(key, Buffer.concat([body, Buffer.from(' ')]), sig), 'a byte appended');
  t.notOk(hmacVerify(key, body, sig.slice(0, -2)), 'a short signature');
  t.notOk(hmacVerify(key, body, `${sig}AAAA`), 'a long signature');
  t.notOk(hmacVerify(key, body, ''), 'an empty signature');
  t.notOk(hmacVerify(key, body, '!'.repeat(SIGNATURE_B64_LENGTH)), 'not base64 at all');
  t.notOk(hmacVerify(key, body, hmacSign(key, Buffer.from('{}'))), 'the signature of another body');
  // The 43rd character carries two bits the 32 bytes do not use: flipping them spells the same digest otherwise.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const loose = `${sig.slice(0, 42)}${alphabet[alphabet.indexOf(sig[42] ?? 'A') ^ 1]}=`;
  t.same(Buffer.from(loose, 'base64'), Buffer.from(sig, 'base64'), 'the loose spelling decodes to the same digest');
  t.notOk(hmacVerify(key, body, loose), 'but only the canonical spelling of the digest is accepted');
});

t.test('newSessionKey gives 32 random bytes each time', async (t) => {
  const a = newSessionKey();
  const b = newSessionKey();
  t.equal(a.length, 32);
  t.equal(b.length, 32);
  t.notSame(a, b);
});

t.test('a session key encrypted to a node public key decrypts with its private key', async (t) => {
  const key = newSessionKey();
  const wrapped = encryptSessionKey(key, publicKey);
  t.match(wrapped, /^[A-Za-z0-9+/]+=*$/, 'base64');
  t.equal(Buffer.from(wrapped, 'base64').length, 256, 'one RSA-2048 block');
  t.same(decryptSessionKey(wrapped, privateKey), key);

  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  t.same(decryptSessionKey(encryptSessionKey(key, pem), privatePem), key, 'PEM strings work as well as KeyObjects');
  t.not(
    encryptSessionKey(key, publicKey),
    wrapped,
    'OAEP is randomized: the same key never encrypts the same way twice',
  );
});

t.test('decryptSessionKey refuses what it cannot trust', async (t) => {
  const key = newSessionKey();
  t.throws(
    () => decryptSessionKey(encryptSessionKey(key, other.publicKey), privateKey),
    SessionKeyError,
    'encrypted to another node',
  );
  const pkcs1 = publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_PADDING }, key).toString('base64');
  t.throws(() => decryptSessionKey(pkcs1, privateKey), SessionKeyError, 'PKCS#1 v1.5 padding, as the original sent');
  t.throws(() => decryptSessionKey(encryptSessionKey(key.subarray(0, 16), publicKey), privateKey), {
    name: 'SessionKeyError',
    message: /16 bytes/,
  });
  t.throws(() => decryptSessionKey('not base64 at all', privateKey), SessionKeyError);
});
