// The Curve client keys ZAP admits: those a live session names (ccpk), Z85 as nodes write them, and what the ZAP
// handler (RFC 27) answers without asking a hub (the fault tests see it admit and refuse through real sockets).
import t from 'tap';
import { AdmittedKeys, CLIENT_KEYS_PER_SESSION, withClientKey } from '../../src/transport/admitted-keys.js';
import { answer } from '../../src/transport/zap.js';
import { ManualClock } from '../support/manual-clock.js';
import { curveKeyBytes, z85Decode } from '../../src/protocol/z85.js';

/** Curve public keys as zeromq's curveKeyPair() writes them (Z85), made once for these tests. */
const KEYS = [
  '/*cFbjj(Xo}7KdCY$u0/!A#WSLe48i=/I.m^&CQ%',
  '3!gO3Ed#/z*weM[Aw@d}rG}pfBPC*Ln+hVoe1vFu',
  'r!=wJ=-F9Giz%{4tA9j](rG]Q{OxA1BeggEC{!IL',
] as const;

t.test('Z85 decodes as RFC 32 says, and refuses what is not Z85', async (t) => {
  t.same([...(z85Decode('HelloWorld') ?? [])], [0x86, 0x4f, 0xd2, 0x6f, 0xb5, 0x59, 0xf7, 0x5b], 'the RFC example');
  t.equal(z85Decode('Hello'.repeat(1) + 'Worl'), undefined, 'a length that is not a multiple of 5');
  t.equal(z85Decode('Hello Worl'), undefined, 'a character outside the alphabet');
  t.equal(z85Decode('#####'), undefined, 'a group worth more than 32 bits');
  t.equal(curveKeyBytes(KEYS[0])?.length, 32, "a Curve public key's 32 bytes");
  t.equal(curveKeyBytes('HelloWorld'), undefined, 'only 40 characters make a Curve key');
});

t.test('a key is admitted while a live session names it', async (t) => {
  const clock = { now: 1000 };
  const keys = new AdmittedKeys(() => clock.now);
  const [a, b, c] = KEYS;
  const raw = (k: string) => curveKeyBytes(k) as Buffer;
  t.equal(keys.refusal(raw(a)), 'curve_key_unknown', 'no session names it yet');
  keys.bind('org', 'web1', [a], 5000);
  t.equal(keys.refusal(raw(a)), undefined, 'named: admitted');
  t.equal(keys.refusal(raw(b)), 'curve_key_unknown', 'another key is not');
  keys.bind('org', 'web2', [a, b], 9000);
  clock.now = 6000;
  t.equal(keys.refusal(raw(a)), undefined, 'still named by a live session after the first expired');
  keys.bind('org', 'web2', [c], 9000);
  t.equal(keys.refusal(raw(a)), 'curve_key_expired', 'only its expired session names it now');
  t.equal(keys.refusal(raw(b)), 'curve_key_unknown', 'a key the session no longer names is let go');
  keys.forgetOrg('org');
  t.equal(keys.refusal(raw(c)), 'curve_key_unknown', 'an organization served elsewhere admits nothing here');
});

t.test('a session keeps the latest keys named, without repeats', async (t) => {
  t.equal(withClientKey(['k1'], 'k1'), undefined, 'a key named again changes nothing');
  const many = ['k1', 'k2', 'k3', 'k4'].slice(0, CLIENT_KEYS_PER_SESSION);
  t.same(withClientKey(many, 'k5'), [...many.slice(1), 'k5'], 'past the most, the oldest goes');
});

t.test('ZAP refuses a domain no hub registered, and credentials that are not a Curve key', async (t) => {
  const request = (domain: string, key: Buffer): Buffer[] => [
    ...['1.0', 'id-1', domain, '127.0.0.1', '', 'CURVE'].map((f) => Buffer.from(f)),
    key,
  ];
  const key = Buffer.alloc(32, 7);
  const text = (frames: Array<string | Buffer>) => frames.map((f) => f.toString());
  t.same(
    text(await answer(request('nobody', key))),
    ['1.0', 'id-1', '400', 'Unknown domain', '', ''],
    'no such domain',
  );
  t.same(text(await answer(request('', Buffer.alloc(3)))).slice(2, 3), ['400'], 'not a Curve key');
});

t.test('a handshake of a key no session names yet waits for one, a moment at most', async (t) => {
  const clock = new ManualClock();
  const keys = new AdmittedKeys(() => 1000, clock);
  const [a, b] = KEYS;
  const raw = (k: string) => curveKeyBytes(k) as Buffer;
  let named = false;
  const waiting = keys.named(raw(a), 2000).then(() => (named = true));
  keys.bind('org', 'web1', [a], 5000);
  await waiting;
  t.equal(named, true, 'it goes on as soon as a session names the key');
  t.equal(keys.refusal(raw(a)), undefined, 'which is then admitted');
  let gaveUp = false;
  const never = keys.named(raw(b), 2000).then(() => (gaveUp = true));
  await clock.until('the wait to run out', () => gaveUp);
  await never;
  t.equal(keys.refusal(raw(b)), 'curve_key_unknown', 'a key no session names is refused once the wait is over');
  t.ok(clock.now() >= 2000, 'after the wait');
});
