// The signature pool with real worker threads: its answers are those of the inline check, batches keep each
// check's keys and order, and a worker that dies loses no check.
import t from 'tap';
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { PUBLIC_KEY_CACHE_SIZE } from '../../src/auth/rsa-keys.js';
import { SignaturePool } from '../../src/auth/signature-pool.js';
import {
  readAuthHeaders,
  signatureCheckOf,
  signRequest,
  type SignatureCheck,
  type SignVersion,
} from '../../src/auth/signed-headers.js';

const pair = () => generateKeyPairSync('rsa', { modulusLength: 2048 });
const [alice, bob] = [pair(), pair()];

/** The check a server makes of a request signed by `signer`, against `keys` in that order. */
function checkOf(signer: KeyObject, keys: KeyObject[], path: string, version: SignVersion = '1.1'): SignatureCheck {
  const headers = signRequest({ privateKey: signer, userId: 'someone', method: 'GET', path, version });
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const read = readAuthHeaders((name) => lower.get(name), Date.now(), 900);
  if (!read.ok) throw new Error(`headers refused: ${JSON.stringify(read.body)}`);
  const check = signatureCheckOf(read.auth, keys, 'GET', path, '');
  if (check === null) throw new Error('no check for a well-formed request');
  return check;
}

/** Every check to a worker, whatever the main thread's load. */
const always = () => true;
const crashingWorker = new URL('../support/crashing-signature-worker.js', import.meta.url);

t.test('a pool thread answers as the inline check does, for every protocol version', async (t) => {
  const pool = new SignaturePool({ threads: 1, offload: always });
  t.teardown(() => pool.close());
  t.equal(pool.size, 1);
  for (const version of ['1.0', '1.1', '1.2', '1.3'] as const) {
    t.equal(
      await pool.check(checkOf(alice.privateKey, [alice.publicKey], '/a', version)),
      0,
      `${version}: signer's key`,
    );
    t.equal(await pool.check(checkOf(alice.privateKey, [bob.publicKey], '/a', version)), -1, `${version}: other key`);
    t.equal(
      await pool.check(checkOf(alice.privateKey, [bob.publicKey, alice.publicKey], '/a', version)),
      1,
      `${version}: the second of two keys`,
    );
  }
});

t.test('checks sent together keep their own keys, bytes and answers', async (t) => {
  const pool = new SignaturePool({ threads: 2, offload: always });
  t.teardown(() => pool.close());
  const cases = Array.from({ length: 60 }, (_, i) => {
    const signer = i % 3 === 0 ? bob : alice;
    const keys = i % 2 === 0 ? [alice.publicKey, bob.publicKey] : [bob.publicKey];
    const expected = keys.indexOf(signer.publicKey);
    return { check: checkOf(signer.privateKey, keys, `/organizations/o/nodes/n${i}`), expected };
  });
  // A signature moved to another check's request must fail: each check is made on its own bytes.
  const swapped = { ...cases[1]!.check, signature: cases[3]!.check.signature };
  const answers = await Promise.all([...cases.map((c) => pool.check(c.check)), pool.check(swapped)]);
  t.same(answers, [...cases.map((c) => c.expected), -1], 'every answer is its own check');
});

t.test('without threads the pool checks inline', async (t) => {
  const pool = new SignaturePool({ threads: 0 });
  t.equal(pool.size, 0);
  t.equal(await pool.check(checkOf(alice.privateKey, [alice.publicKey], '/x')), 0);
  t.equal(await pool.check(checkOf(alice.privateKey, [bob.publicKey], '/x')), -1);
  await pool.close();
});

t.test(
  'a worker that dies loses no check; the pool replaces it, and stops replacing one that keeps dying',
  async (t) => {
    const crashes: unknown[] = [];
    const pool = new SignaturePool({
      threads: 1,
      observer: { workerCrashed: (e) => crashes.push(e) },
      offload: always,
      script: crashingWorker,
    });
    t.teardown(() => pool.close());
    const first = await Promise.all([
      pool.check(checkOf(alice.privateKey, [alice.publicKey], '/one')),
      pool.check(checkOf(alice.privateKey, [bob.publicKey], '/two')),
    ]);
    t.same(first, [0, -1], "the dead worker's checks were made on the main thread");
    t.equal(crashes.length, 1, 'the crash was reported');
    t.match(String(crashes[0]), /exited with code 3/);
    t.equal(pool.size, 1, 'a new worker took its place');

    for (let i = 0; i < 6; i++) t.equal(await pool.check(checkOf(bob.privateKey, [bob.publicKey], `/n${i}`)), 0);
    t.equal(crashes.length, 6, 'one crash a worker, up to the limit of five replacements a minute');
    t.equal(pool.size, 0, 'past the limit, no more workers: checks run inline');
    t.equal(await pool.check(checkOf(alice.privateKey, [alice.publicKey], '/after')), 0, 'and are still answered');
  },
);

t.test(
  'while the main thread has time to spare, checks stay on it; once it is saturated they go to a worker',
  async (t) => {
    const crashes: unknown[] = [];
    let saturated = false;
    // The crashing worker shows where a check went: a check sent to it ends that worker.
    const pool = new SignaturePool({
      threads: 1,
      observer: { workerCrashed: (e) => crashes.push(e) },
      offload: () => saturated,
      script: crashingWorker,
    });
    t.teardown(() => pool.close());
    t.equal(await pool.check(checkOf(alice.privateKey, [alice.publicKey], '/spare')), 0);
    t.equal(await pool.check(checkOf(alice.privateKey, [bob.publicKey], '/spare')), -1);
    t.equal(crashes.length, 0, 'no check reached a worker');
    saturated = true;
    t.equal(await pool.check(checkOf(alice.privateKey, [alice.publicKey], '/busy')), 0);
    t.equal(crashes.length, 1, 'the check went to the worker');
  },
);

t.test('past the keys a worker holds, it forgets them and is sent again those it needs', async (t) => {
  const pool = new SignaturePool({ threads: 1, offload: always });
  t.teardown(() => pool.close());
  const pem = alice.publicKey.export({ type: 'spki', format: 'pem' });
  // Each parse is a key object of its own, so each is a key the worker has not seen.
  const keys = Array.from({ length: PUBLIC_KEY_CACHE_SIZE + 10 }, () => createPublicKey(pem));
  const signed = checkOf(alice.privateKey, [alice.publicKey], '/many');
  const answers = await Promise.all(keys.map((key) => pool.check({ ...signed, keys: [key] })));
  t.ok(
    answers.every((a) => a === 0),
    `all ${keys.length} checks verified`,
  );
  // The worker now holds more keys than it may: the next batch tells it to forget them and sends its key again.
  t.equal(await pool.check({ ...signed, keys: [keys[0]!] }), 0, 'a key sent before the worker forgot');
  t.equal(await pool.check({ ...signed, keys: [keys[1]!, keys[0]!] }), 0, 'two keys, one of them sent again');
  t.equal(pool.unchecked, 0, 'every check was made by the worker: it held each key it was asked about');
});
