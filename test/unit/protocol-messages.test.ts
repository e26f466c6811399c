// Message schemas: every type accepted as the wire writes it, strictness, length limits, and HTTP-date parsing.
import t from 'tap';
import { httpDate, parseHttpDate } from '../../src/lib/dates.js';
import {
  clientMessageSchema,
  enveloped,
  envelopeFor,
  MAX_JOB_ID_LENGTH,
  NACK_COMMIT_REASONS,
  serverMessageSchema,
  type ClientMessage,
  type ServerMessage,
} from '../../src/protocol/messages.js';

const NOW = Date.UTC(2026, 10, 21, 10, 35, 19);
const env = envelopeFor('acme', 'web01', '6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f', 7, NOW);

const serverSamples: ServerMessage[] = [
  { type: 'heartbeat', ...env, server: 'push.example.com', interval_ms: 1000 },
  { type: 'commit', ...env, job_id: 'a'.repeat(32), command: 'chef-client', run_timeout: 3600 },
  {
    type: 'commit',
    ...env,
    job_id: 'j2',
    command: 'deploy',
    run_timeout: 60,
    user: 'deploy',
    dir: '/srv/app',
    env: { RELEASE: '42', EMPTY: '' },
    file: 'base64:aGVsbG8=',
    capture: true,
  },
  { type: 'run', ...env, job_id: 'j1' },
  { type: 'abort', ...env, job_id: 'j1' },
  { type: 'abort', ...env, job_id: null },
];

const clientSamples: ClientMessage[] = [
  { type: 'heartbeat', ...env, job_state: 'idle', job_id: null },
  { type: 'heartbeat', ...env, job_state: 'running', job_id: 'j1' },
  { type: 'ack_commit', ...env, job_id: 'j1' },
  ...NACK_COMMIT_REASONS.map((reason): ClientMessage => ({ type: 'nack_commit', ...env, job_id: 'j1', reason })),
  { type: 'ack_run', ...env, job_id: 'j1' },
  { type: 'nack_run', ...env, job_id: 'j1' },
  { type: 'succeeded', ...env, job_id: 'j1', exit_status: 0 },
  { type: 'succeeded', ...env, job_id: 'j1', exit_status: 0, stdout: 'ok\n', stderr: '', truncated: false },
  { type: 'failed', ...env, job_id: 'j1', exit_status: 3, stdout: 'x'.repeat(100), stderr: 'boom', truncated: true },
  { type: 'failed', ...env, job_id: 'j1', exit_status: null },
  { type: 'aborted', ...env, job_id: 'j1' },
  { type: 'aborted', ...env, job_id: null },
];

t.test('envelopeFor stamps the HTTP-date of the send time', async (t) => {
  t.same(env, {
    org: 'acme',
    node: 'web01',
    incarnation_id: '6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f',
    sequence: 7,
    timestamp: 'Sat, 21 Nov 2026 10:35:19 GMT',
  });
});

t.test('enveloped writes the message fields first, then the envelope, leaving both inputs as they were', async (t) => {
  const commit = { type: 'commit', job_id: 'a'.repeat(32), command: 'chef-client', run_timeout: 60 };
  const text = JSON.stringify(enveloped(commit, env));
  t.equal(
    text,
    '{"type":"commit","job_id":"' +
      'a'.repeat(32) +
      '","command":"chef-client","run_timeout":60,"org":"acme","node":"web01",' +
      '"incarnation_id":"6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f","sequence":7,"timestamp":"Sat, 21 Nov 2026 10:35:19 GMT"}',
  );
  t.same(Object.keys(commit), ['type', 'job_id', 'command', 'run_timeout'], 'the message is not changed');
  t.ok(serverMessageSchema.safeParse(JSON.parse(text)).success, 'what it writes is a valid server message');
});

t.test('every server message survives JSON and the server union unchanged', async (t) => {
  for (const m of serverSamples) {
    const r = serverMessageSchema.safeParse(JSON.parse(JSON.stringify(m)));
    t.ok(r.success, `${m.type} accepted`);
    if (r.success) t.same(r.data, m, `${m.type} unchanged`);
  }
});

t.test('every client message survives JSON and the client union unchanged', async (t) => {
  for (const m of clientSamples) {
    const r = clientMessageSchema.safeParse(JSON.parse(JSON.stringify(m)));
    t.ok(r.success, `${m.type} accepted`);
    if (r.success) t.same(r.data, m, `${m.type} unchanged`);
  }
});

t.test('a message of one direction is refused by the other union', async (t) => {
  for (const m of serverSamples)
    t.notOk(clientMessageSchema.safeParse(m).success, `server ${m.type} is not a client message`);
  for (const m of clientSamples)
    t.notOk(serverMessageSchema.safeParse(m).success, `client ${m.type} is not a server message`);
});

t.test('unknown fields and missing fields are refused', async (t) => {
  const run = { type: 'run', ...env, job_id: 'j1' };
  t.notOk(serverMessageSchema.safeParse({ ...run, extra: 1 }).success, 'an extra field');
  t.notOk(serverMessageSchema.safeParse({ ...run, client: 'host' }).success, "the original's `client` field");
  t.notOk(serverMessageSchema.safeParse({ ...run, type: 'ack' }).success, "the original's `ack`");
  for (const field of ['type', 'org', 'node', 'incarnation_id', 'sequence', 'timestamp', 'job_id']) {
    const copy: Record<string, unknown> = { ...run };
    delete copy[field];
    t.notOk(serverMessageSchema.safeParse(copy).success, `without ${field}`);
  }
  t.notOk(
    clientMessageSchema.safeParse({ type: 'heartbeat', ...env, job_state: 'idle' }).success,
    'heartbeat without job_id',
  );
  t.notOk(
    serverMessageSchema.safeParse({ type: 'commit', ...env, job_id: 'j', command: 'c' }).success,
    'commit without run_timeout',
  );
});

t.test('field values outside their domain are refused', async (t) => {
  const hb = { type: 'heartbeat', ...env, job_state: 'idle', job_id: null };
  const bad: [string, Record<string, unknown>][] = [
    ['a job id over 64 characters', { job_id: 'j'.repeat(MAX_JOB_ID_LENGTH + 1) }],
    ['an empty job id', { job_id: '' }],
    ['an unknown job_state', { job_state: 'voting' }],
    ['a negative sequence', { sequence: -1 }],
    ['a fractional sequence', { sequence: 1.5 }],
    ['a sequence as a string', { sequence: '7' }],
    ['an incarnation id that is not a UUID', { incarnation_id: 'abc' }],
    ['an ISO timestamp', { timestamp: '2026-11-21T10:35:19Z' }],
    ['the wrong weekday', { timestamp: 'Fri, 21 Nov 2026 10:35:19 GMT' }],
    ['a node name over 255 characters', { node: 'n'.repeat(256) }],
    ['an empty org', { org: '' }],
  ];
  for (const [label, change] of bad) t.notOk(clientMessageSchema.safeParse({ ...hb, ...change }).success, label);
  t.ok(
    clientMessageSchema.safeParse({ ...hb, job_id: 'j'.repeat(MAX_JOB_ID_LENGTH) }).success,
    'a 64-character job id',
  );

  const commit = { type: 'commit', ...env, job_id: 'j', command: 'c', run_timeout: 10 };
  t.notOk(serverMessageSchema.safeParse({ ...commit, file: 'hello' }).success, 'a file without raw: or base64:');
  t.ok(serverMessageSchema.safeParse({ ...commit, file: 'raw:hello' }).success, 'a raw: file');
  t.notOk(serverMessageSchema.safeParse({ ...commit, env: { A: 1 } }).success, 'an env value that is not a string');
  t.notOk(serverMessageSchema.safeParse({ ...commit, run_timeout: 0 }).success, 'a zero run_timeout');
  t.notOk(serverMessageSchema.safeParse({ ...commit, capture: 'yes' }).success, 'capture as a string');
  t.notOk(
    serverMessageSchema.safeParse({ type: 'heartbeat', ...env, server: 's', interval_ms: 0 }).success,
    'a zero interval',
  );

  const nack = { type: 'nack_commit', ...env, job_id: 'j' };
  t.notOk(clientMessageSchema.safeParse({ ...nack, reason: 'lock_held' }).success, 'an unknown nack reason');
  t.notOk(clientMessageSchema.safeParse(nack).success, 'a nack without a reason');
});

t.test('captured output comes with stdout, stderr and truncated together', async (t) => {
  const done = { type: 'succeeded', ...env, job_id: 'j', exit_status: 0 };
  t.notOk(clientMessageSchema.safeParse({ ...done, stdout: 'a', stderr: 'b' }).success, 'output without truncated');
  t.notOk(clientMessageSchema.safeParse({ ...done, stdout: 'a', truncated: false }).success, 'stdout without stderr');
  t.notOk(
    clientMessageSchema.safeParse({ ...done, type: 'failed', truncated: true }).success,
    'truncated without output',
  );
  t.notOk(clientMessageSchema.safeParse({ ...done, exit_status: 1.5 }).success, 'a fractional exit status');
  t.notOk(
    clientMessageSchema.safeParse({ ...done, stdout: 'x'.repeat(65537), stderr: '', truncated: false }).success,
    'stdout over the limit',
  );
});

t.test('parseHttpDate reads back what httpDate writes, to the second', async (t) => {
  const instants = [
    0,
    NOW,
    NOW + 999,
    Date.UTC(2024, 1, 29, 23, 59, 59),
    Date.UTC(2000, 0, 1),
    Date.UTC(2100, 11, 31, 12),
  ];
  for (const ms of instants) t.equal(parseHttpDate(httpDate(ms)), Math.floor(ms / 1000) * 1000, httpDate(ms));
});

t.test('parseHttpDate refuses anything but a real IMF-fixdate', async (t) => {
  const bad = [
    '',
    'Sat, 21 Nov 2026 10:35:19 UTC',
    'Sat, 21 Nov 2026 10:35:19 GMT ',
    'Saturday, 21-Nov-26 10:35:19 GMT',
    'Sat Nov 21 10:35:19 2026',
    'Sat, 21 nov 2026 10:35:19 GMT',
    'Sat, 21 Nox 2026 10:35:19 GMT',
    'Sun, 21 Nov 2026 10:35:19 GMT',
    'Sat, 21 Nov 2026 24:00:00 GMT',
    'Sat, 21 Nov 2026 10:60:19 GMT',
    'Sat, 21 Nov 2026 10:35:60 GMT',
    'Tue, 31 Feb 2026 10:35:19 GMT',
    'Sun, 29 Feb 2026 10:35:19 GMT',
    'Sat, 00 Nov 2026 10:35:19 GMT',
    'Sat, 2x Nov 2026 10:35:19 GMT',
    'Sat, 21 Nov 0050 10:35:19 GMT',
  ];
  for (const s of bad) t.equal(parseHttpDate(s), undefined, JSON.stringify(s));
});
