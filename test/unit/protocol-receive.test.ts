// decodeFrames: round trips of every message, each drop reason from a crafted frame set, replay tracking, drop
// counting, and a seeded fuzz showing that no input throws.
import t, { type Test } from 'tap';
import { encodeMessage } from '../../src/protocol/frames.js';
import { envelopeFor, type ClientMessage, type ServerMessage } from '../../src/protocol/messages.js';
import {
  decodeFrames,
  DropCounter,
  DROP_REASONS,
  NodeHolders,
  type DecodeOptions,
  type DropReason,
} from '../../src/protocol/receive.js';
import { GatewayReplayGuard, ReplayGuard } from '../../src/protocol/replay.js';
import { hmacSign, newSessionKey } from '../../src/protocol/signing.js';

const NOW = Date.UTC(2026, 10, 21, 10, 35, 19);
const CLIENT_INC = '6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f';
const SERVER_INC = '0d9e8f7a-6b5c-4d3e-8f1a-2b3c4d5e6f70';
const keys = new Map([
  ['acme/web01', newSessionKey()],
  ['acme/web02', newSessionKey()],
]);
const web01 = keys.get('acme/web01') ?? Buffer.alloc(0);
const web02 = keys.get('acme/web02') ?? Buffer.alloc(0);
const IDENTITY = Buffer.from([0, 1, 2, 3, 4]);

interface Lookups {
  calls: string[];
}

function serverSide(
  lookups: Lookups = { calls: [] },
  replay = new ReplayGuard(),
): DecodeOptions & { schema: 'client'; replay: ReplayGuard } {
  return {
    expectIdentity: true,
    now: NOW,
    keyFor: (org, node) => {
      lookups.calls.push(`${org}/${node}`);
      return keys.get(`${org}/${node}`);
    },
    replay,
    schema: 'client',
  };
}

function clientSide(): DecodeOptions & { schema: 'server' } {
  return {
    expectIdentity: false,
    now: NOW,
    keyFor: (org, node) => keys.get(`${org}/${node}`),
    replay: new GatewayReplayGuard(),
    schema: 'server',
  };
}

function heartbeat(sequence: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'heartbeat',
    ...envelopeFor('acme', 'web01', CLIENT_INC, sequence, NOW),
    job_state: 'idle',
    job_id: null,
    ...over,
  };
}

/** The frames a ROUTER reads for `body` sent by web01. */
function routed(body: object, key = web01): Buffer[] {
  return [IDENTITY, ...encodeMessage(body, key)];
}

function expectDrop(t: Test, frames: readonly Buffer[], opts: DecodeOptions, reason: DropReason, label: string): void {
  const r = decodeFrames(frames, opts);
  t.same(r.ok ? 'accepted' : r.reason, reason, label);
  if (!r.ok) t.type(r.detail, 'string');
}

t.test('every client message round-trips to the server with its routing id', async (t) => {
  const env = envelopeFor('acme', 'web01', CLIENT_INC, 1, NOW);
  const messages: ClientMessage[] = [
    { type: 'heartbeat', ...env, job_state: 'committed', job_id: 'j1' },
    { type: 'ack_commit', ...env, job_id: 'j1' },
    { type: 'nack_commit', ...env, job_id: 'j1', reason: 'not_whitelisted' },
    { type: 'ack_run', ...env, job_id: 'j1' },
    { type: 'nack_run', ...env, job_id: 'j1' },
    { type: 'succeeded', ...env, job_id: 'j1', exit_status: 0, stdout: 'out', stderr: 'err', truncated: false },
    { type: 'failed', ...env, job_id: 'j1', exit_status: null },
    { type: 'aborted', ...env, job_id: null },
  ];
  const opts = serverSide();
  messages.forEach((m, i) => {
    const r = decodeFrames(routed({ ...m, sequence: i + 1 }), opts);
    t.same(r, { ok: true, message: { ...m, sequence: i + 1 }, identity: IDENTITY }, m.type);
  });
});

t.test('every server message round-trips to the node', async (t) => {
  const env = envelopeFor('acme', 'web01', SERVER_INC, 1, NOW);
  const messages: ServerMessage[] = [
    { type: 'heartbeat', ...env, server: 'push.example.com', interval_ms: 1000 },
    {
      type: 'commit',
      ...env,
      job_id: 'j1',
      command: 'deploy',
      run_timeout: 30,
      env: { A: 'b' },
      file: 'raw:x',
      capture: true,
    },
    { type: 'run', ...env, job_id: 'j1' },
    { type: 'abort', ...env, job_id: null },
  ];
  const opts = clientSide();
  messages.forEach((m, i) => {
    const r = decodeFrames(encodeMessage({ ...m, sequence: i + 1 }, web01), opts);
    t.same(r, { ok: true, message: { ...m, sequence: i + 1 } }, m.type);
  });
});

t.test('frame_count: anything but exactly [identity,] header, body', async (t) => {
  const [header, body] = encodeMessage(heartbeat(1), web01);
  const dealer = clientSide();
  expectDrop(t, [], dealer, 'frame_count', 'no frames');
  expectDrop(t, [header], dealer, 'frame_count', '1 frame');
  expectDrop(t, [header, body, body], dealer, 'frame_count', '3 frames on the DEALER side');
  expectDrop(t, [header, body, body, body], dealer, 'frame_count', '4 frames');
  expectDrop(t, [header, body], serverSide(), 'frame_count', '2 frames on the ROUTER side');
  expectDrop(t, [IDENTITY, header, body, body], serverSide(), 'frame_count', '4 frames on the ROUTER side');
  expectDrop(t, [Buffer.alloc(0), header, body], serverSide(), 'frame_count', 'an empty routing id');
});

t.test('oversize: header over 2048 bytes, body over max_body_size', async (t) => {
  const [header, body] = encodeMessage(heartbeat(1), web01);
  expectDrop(t, [IDENTITY, Buffer.alloc(2049, 0x41), body], serverSide(), 'oversize', 'a 2049-byte header');
  expectDrop(
    t,
    [IDENTITY, header, Buffer.alloc(65537, 0x20)],
    serverSide(),
    'oversize',
    'a body over the default 65536',
  );
  expectDrop(
    t,
    [IDENTITY, header, body],
    { ...serverSide(), maxBodySize: body.length - 1 },
    'oversize',
    'a body one byte over a configured limit',
  );
  t.ok(
    decodeFrames([IDENTITY, header, body], { ...serverSide(), maxBodySize: body.length }).ok,
    'a body exactly at the limit',
  );
});

t.test('bad_header: each header defect', async (t) => {
  const [header, body] = encodeMessage(heartbeat(1), web01);
  const text = header.toString('latin1');
  const variants: [string, string][] = [
    ['version 1.0', text.replace('Version:2.0', 'Version:1.0')],
    ['rsa2048_sha1', text.replace('hmac_sha256', 'rsa2048_sha1')],
    ['no signature', text.replace(/;Signature:.*$/, '')],
    ['a truncated signature', text.slice(0, -2)],
    ['no colon', 'Version2.0'],
    ['empty', ''],
  ];
  for (const [label, h] of variants)
    expectDrop(t, [IDENTITY, Buffer.from(h, 'latin1'), body], serverSide(), 'bad_header', label);
});

t.test('bad_json: the body must be a JSON object', async (t) => {
  const bodies: [string, string][] = [
    ['not JSON', '{"type":'],
    ['a JSON array', '[{"org":"acme","node":"web01"}]'],
    ['JSON null', 'null'],
    ['a JSON string', '"acme"'],
    ['an empty body', ''],
  ];
  for (const [label, text] of bodies) {
    const body = Buffer.from(text);
    const [header] = encodeMessage({}, web01);
    expectDrop(t, [IDENTITY, header, body], serverSide(), 'bad_json', label);
  }
});

t.test('without string org and node there is no key to look up', async (t) => {
  const lookups = { calls: [] };
  expectDrop(t, routed({ ...heartbeat(1), org: 5 }), serverSide(lookups), 'bad_body', 'a numeric org');
  expectDrop(t, routed({ ...heartbeat(1), node: undefined }), serverSide(lookups), 'bad_body', 'no node');
  t.same(lookups.calls, [], 'no key lookup');
});

t.test('unknown_node: no session key, and nothing is created for it', async (t) => {
  const lookups = { calls: [] };
  const replay = new ReplayGuard();
  expectDrop(
    t,
    routed({ ...heartbeat(1), node: 'intruder' }),
    serverSide(lookups, replay),
    'unknown_node',
    'a node without a key',
  );
  expectDrop(
    t,
    routed({ ...heartbeat(1), org: 'other' }),
    serverSide(lookups, replay),
    'unknown_node',
    'a known node name in another org',
  );
  t.same(lookups.calls, ['acme/intruder', 'other/web01'], 'looked up by the body org and node');
  t.equal(replay.size, 0, 'the replay guard learned nothing');
});

t.test('bad_signature: forged, moved or mis-keyed signatures', async (t) => {
  const frames = routed(heartbeat(1));
  const forged = Buffer.from(`Version:2.0;SigningMethod:hmac_sha256;Signature:${newSessionKey().toString('base64')}`);
  expectDrop(
    t,
    [IDENTITY, forged, frames[2] ?? Buffer.alloc(0)],
    serverSide(),
    'bad_signature',
    'random signature bytes',
  );
  const other = routed(heartbeat(2));
  const swapped = [IDENTITY, other[1] ?? Buffer.alloc(0), frames[2] ?? Buffer.alloc(0)];
  expectDrop(t, swapped, serverSide(), 'bad_signature', 'the signature of a different body');
  expectDrop(t, routed(heartbeat(1), web02), serverSide(), 'bad_signature', "web01's message signed with web02's key");
  const body = Buffer.from(JSON.stringify(heartbeat(1)));
  const tampered = Buffer.from(body.toString().replace('"idle"', '"running"'));
  const header = Buffer.from(`Version:2.0;SigningMethod:hmac_sha256;Signature:${hmacSign(web01, body)}`);
  expectDrop(t, [IDENTITY, header, tampered], serverSide(), 'bad_signature', 'a body changed after signing');
});

t.test(
  'the HMAC is checked before the schema: an unsigned invalid body is bad_signature, a signed one bad_body',
  async (t) => {
    const invalid = { ...heartbeat(1), job_state: 'dancing', extra: true };
    expectDrop(t, routed(invalid, web02), serverSide(), 'bad_signature', 'unauthenticated');
    expectDrop(t, routed(invalid), serverSide(), 'bad_body', 'authenticated');
    expectDrop(
      t,
      routed({ ...heartbeat(1), type: 'commit' }),
      serverSide(),
      'bad_body',
      'a server message type sent by a client',
    );
    expectDrop(
      t,
      encodeMessage({ ...heartbeat(1), type: 'ack_run' }, web01),
      clientSide(),
      'bad_body',
      'a client message type sent to a client',
    );
  },
);

t.test('skew: timestamps more than max_message_skew away, in either direction', async (t) => {
  const at = (ms: number, seq: number) =>
    routed({ ...heartbeat(seq), ...envelopeFor('acme', 'web01', CLIENT_INC, seq, ms) });
  const opts = serverSide();
  expectDrop(t, at(NOW - 301_000, 1), opts, 'skew', '301 s old');
  expectDrop(t, at(NOW + 301_000, 1), opts, 'skew', '301 s in the future');
  t.ok(decodeFrames(at(NOW - 300_000, 1), opts).ok, 'exactly 300 s old');
  t.ok(decodeFrames(at(NOW + 300_000, 2), opts).ok, 'exactly 300 s ahead');
  expectDrop(t, at(NOW - 11_000, 3), { ...opts, maxSkewSeconds: 10 }, 'skew', 'a configured 10 s limit');
  t.equal(opts.replay.size, 1, 'skewed messages did not advance the sequence');
  t.ok(decodeFrames(at(NOW, 3), opts).ok, 'sequence 3 is still accepted after its skewed copy was dropped');
});

t.test('replay: the sequence must rise within an incarnation; a new incarnation starts over', async (t) => {
  const opts = serverSide();
  const five = routed(heartbeat(5));
  t.ok(decodeFrames(five, opts).ok, 'sequence 5');
  expectDrop(t, five, opts, 'replay', 'the same message again');
  expectDrop(t, routed(heartbeat(4)), opts, 'replay', 'a lower sequence');
  expectDrop(t, routed(heartbeat(5)), opts, 'replay', 'an equal sequence, freshly signed');
  t.ok(decodeFrames(routed(heartbeat(9)), opts).ok, 'a gap is fine');
  const restarted = '11111111-2222-4333-8444-555555555555';
  t.ok(decodeFrames(routed(heartbeat(1, { incarnation_id: restarted })), opts).ok, 'a new incarnation with sequence 1');
  expectDrop(t, routed(heartbeat(10)), opts, 'replay', 'the old incarnation after the restart');
  t.ok(
    decodeFrames(routed({ ...heartbeat(2, { node: 'web02' }) }, web02), opts).ok,
    'another node keeps its own count',
  );
});

t.test('ReplayGuard stays bounded and can forget a sender', async (t) => {
  const guard = new ReplayGuard(3, 2);
  for (let n = 0; n < 5; n++) t.ok(guard.accept('acme', `n${n}`, 'i', 10));
  t.equal(guard.size, 3, 'at most maxSenders');
  t.ok(guard.accept('acme', 'n0', 'i', 1), 'the oldest sender was forgotten, so any sequence passes');
  t.notOk(guard.accept('acme', 'n4', 'i', 10), 'a recent sender is still tracked');
  guard.forget('acme', 'n4');
  t.ok(guard.accept('acme', 'n4', 'i', 10), 'after forget, the sender starts over');
  for (const inc of ['a', 'b', 'c']) t.ok(guard.accept('acme', 'n4', inc, 1), `incarnation ${inc}`);
  t.notOk(guard.accept('acme', 'n4', 'b', 2), 'a retired incarnation is refused');
  t.ok(guard.accept('acme', 'n4', 'i', 11), 'beyond retiredPerSender an old incarnation is new again');
});

t.test('DropCounter counts every drop and logs each reason at most once per interval', async (t) => {
  let clock = 0;
  const lines: string[] = [];
  const counter = new DropCounter({ log: (line) => lines.push(line), intervalSeconds: 10, now: () => clock });
  for (let i = 0; i < 5; i++) counter.record('bad_signature', `from node ${i}`);
  counter.record('skew', 'late');
  t.equal(counter.count('bad_signature'), 5);
  t.same(lines, ['dropped message (bad_signature): from node 0', 'dropped message (skew): late']);
  clock = 9_999;
  counter.record('bad_signature', 'still in the window');
  t.equal(lines.length, 2, 'still rate-limited');
  clock = 10_000;
  counter.record('bad_signature', 'after the window');
  t.equal(lines[2], 'dropped message (bad_signature): after the window; 5 more bad_signature drops not logged');
  const snapshot = counter.snapshot();
  t.same(Object.keys(snapshot).sort(), [...DROP_REASONS].sort(), 'every reason, zeros included');
  t.equal(snapshot.bad_signature, 7);
  t.equal(snapshot.replay, 0);
});

/** mulberry32: a small seeded PRNG so a failing fuzz case can be replayed. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

t.test('no frame set throws: 5000 seeded random and mutated inputs', async (t) => {
  const rand = prng(20261121);
  const int = (n: number) => Math.floor(rand() * n);
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => int(256)));
  const pieces: unknown[] = [
    null,
    true,
    1,
    -1,
    1.5,
    '',
    'x',
    'acme',
    'web01',
    [],
    {},
    'heartbeat',
    'commit',
    NOW,
    'j'.repeat(70),
  ];
  const fields = [
    'type',
    'org',
    'node',
    'incarnation_id',
    'sequence',
    'timestamp',
    'job_state',
    'job_id',
    'reason',
    '__proto__',
  ];
  const valid = routed(heartbeat(1));
  const validBody = valid[2] ?? Buffer.alloc(0);
  const seen = new Set<string>();
  let mutatedAccepted = 0;
  let threw = 0;
  for (let i = 0; i < 5000; i++) {
    let frames: Buffer[];
    let mutated = false;
    switch (i % 4) {
      case 0:
        frames = Array.from({ length: int(5) }, () => bytes(int(200)));
        break;
      case 1: {
        // A valid message with a few random byte changes in one frame.
        frames = valid.map((f) => Buffer.from(f));
        const target = frames[1 + int(2)] ?? Buffer.alloc(0);
        for (let k = 0; k <= int(3); k++) target[int(target.length)] = int(256);
        mutated = !frames.every((f, k) => f.equals(valid[k] ?? Buffer.alloc(0)));
        break;
      }
      case 2: {
        // A signed body of random fields: reaches the schema, timestamp and replay checks.
        const body: Record<string, unknown> = heartbeat(1 + int(3));
        for (let k = 0; k < int(4); k++) body[fields[int(fields.length)] ?? 'x'] = pieces[int(pieces.length)];
        frames = routed(body);
        break;
      }
      default:
        frames = [IDENTITY, valid[1] ?? Buffer.alloc(0), validBody.subarray(0, int(validBody.length))];
    }
    try {
      const r = decodeFrames(frames, { ...serverSide(), replay: new ReplayGuard() });
      if (r.ok) {
        if (mutated) mutatedAccepted += 1;
      } else {
        seen.add(r.reason);
        if (!(DROP_REASONS as readonly string[]).includes(r.reason) || typeof r.detail !== 'string') threw += 1;
      }
    } catch {
      threw += 1;
    }
  }
  t.equal(threw, 0, 'every input gave a result with a known DropReason');
  t.equal(mutatedAccepted, 0, 'no altered message was accepted');
  t.ok(
    seen.has('bad_signature') && seen.has('bad_body') && seen.has('frame_count'),
    `reached deep checks: ${[...seen].join(', ')}`,
  );
});

t.test(
  'incarnations: the live one holds its node; another waits out its silence, and a refusal retires nothing',
  async (t) => {
    const OTHER = '7a1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f';
    const holders = new NodeHolders(3000);
    const opts = { ...serverSide(), holders };
    const at = (now: number) => ({ ...opts, now });
    t.ok(decodeFrames(routed(heartbeat(1)), at(NOW)).ok, 'the first incarnation heard holds the node');
    const refused = decodeFrames(routed(heartbeat(1, { incarnation_id: OTHER })), at(NOW + 1000));
    t.match(refused, {
      ok: false,
      reason: 'incarnation_in_use',
      refused: { org: 'acme', node: 'web01', retryAfterMs: 2001 },
    });
    t.ok(decodeFrames(routed(heartbeat(2)), at(NOW + 1500)).ok, 'the holder goes on: the refusal retired nothing');
    expectDrop(
      t,
      routed(heartbeat(2, { incarnation_id: OTHER })),
      at(NOW + 4500),
      'incarnation_in_use',
      'heard 3 s ago: still held',
    );
    t.ok(decodeFrames(routed(heartbeat(3, { incarnation_id: OTHER })), at(NOW + 4501)).ok, 'silent longer: taken over');
    expectDrop(
      t,
      routed(heartbeat(3)),
      at(NOW + 4600),
      'incarnation_in_use',
      'and the old process is the one refused now',
    );
    const web02beat = { ...heartbeat(1), node: 'web02' };
    t.ok(decodeFrames(routed(web02beat, web02), at(NOW + 4600)).ok, 'nodes are held apart');
  },
);

t.test('a node hears the members of a cluster in turn, and each member’s replays are still refused', async (t) => {
  const guard = new GatewayReplayGuard();
  const [a, b] = ['member-a', 'member-b'];
  const us = 1_796_000_000_000_000; // a server's sequences are its clock in microseconds
  t.ok(guard.accept('acme', 'web01', a, us + 1), 'gateway a');
  t.ok(guard.accept('acme', 'web01', a, us + 2));
  t.ok(guard.accept('acme', 'web01', b, us + 5), 'the node moves to gateway b');
  t.ok(guard.accept('acme', 'web01', a, us + 9), 'and back to a, which it hears again');
  t.notOk(guard.accept('acme', 'web01', a, us + 2), 'a recorded message of a is refused');
  t.notOk(guard.accept('acme', 'web01', b, us + 5), 'and one of b');
  t.ok(guard.accept('acme', 'web01', b, us + 6), 'b goes on');
});

t.test('a member the node heard long ago is forgotten, and its recorded messages stay refused', async (t) => {
  const guard = new GatewayReplayGuard();
  const us = 1_796_000_000_000_000;
  t.ok(guard.accept('acme', 'web01', 'old', us));
  // Sixteen restarts of its gateway later (each a new incarnation, a later clock), the first is forgotten.
  for (let i = 1; i <= 16; i++) t.ok(guard.accept('acme', 'web01', `restart-${i}`, us + i * 1_000_000));
  t.notOk(guard.accept('acme', 'web01', 'old', us), 'a message of the forgotten incarnation is still a replay');
  t.ok(guard.accept('acme', 'web01', 'new', us + 20_000_000), 'a new incarnation, later on the clock, is heard');
});
