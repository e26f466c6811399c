// The hand-written checks accept exactly what the zod unions accept, client messages as clientMessageSchema and
// server messages as serverMessageSchema: on hand-picked edges of every message type, and on generated messages
// with one field changed, dropped or added (a fixed seed, so a failure repeats).
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { httpDate } from '../../src/lib/dates.js';
import { checkClientMessage, checkServerMessage } from '../../src/protocol/message-check.js';
import { clientMessageSchema, serverMessageSchema } from '../../src/protocol/messages.js';

const envelope = {
  org: 'default',
  node: 'web1',
  incarnation_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  sequence: 7,
  timestamp: httpDate(Date.UTC(2026, 10, 21, 10, 0, 0)),
};
const job_id = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const output = { stdout: 'out', stderr: '', truncated: false };

type Body = Record<string, unknown>;

/** One valid client message of each type; completions both with and without output. */
const VALID: Record<string, Body> = {
  heartbeat: { type: 'heartbeat', ...envelope, job_state: 'idle', job_id: null },
  ack_commit: { type: 'ack_commit', ...envelope, job_id },
  nack_commit: { type: 'nack_commit', ...envelope, job_id, reason: 'busy' },
  ack_run: { type: 'ack_run', ...envelope, job_id },
  nack_run: { type: 'nack_run', ...envelope, job_id },
  succeeded: { type: 'succeeded', ...envelope, job_id, exit_status: 0 },
  failed_with_output: { type: 'failed', ...envelope, job_id, exit_status: 3, ...output },
  aborted: { type: 'aborted', ...envelope, job_id: null },
};

const commit = { type: 'commit', ...envelope, job_id, command: 'chef-client', run_timeout: 3600 };
/** One valid server message of each type; a commit both bare and with every optional field. */
const VALID_SERVER: Record<string, Body> = {
  heartbeat: { type: 'heartbeat', ...envelope, server: 'push.example.com', interval_ms: 1000 },
  commit,
  commit_with_all: {
    ...commit,
    user: 'deploy',
    dir: '/srv/app',
    env: { PATH: '/usr/bin', EMPTY: '' },
    file: 'base64:aGVsbG8=',
    capture: true,
  },
  run: { type: 'run', ...envelope, job_id },
  abort: { type: 'abort', ...envelope, job_id: null },
  node_in_use: { type: 'node_in_use', ...envelope, retry_after_ms: 29000 },
  ack_result: { type: 'ack_result', ...envelope, job_id },
};

interface Direction {
  valid: Record<string, Body>;
  zod: (body: Body) => { success: boolean; data?: unknown };
  fast: (body: Body) => { ok: boolean; message?: unknown };
}
const CLIENT: Direction = { valid: VALID, zod: (b) => clientMessageSchema.safeParse(b), fast: checkClientMessage };
const SERVER: Direction = {
  valid: VALID_SERVER,
  zod: (b) => serverMessageSchema.safeParse(b),
  fast: checkServerMessage,
};

function agreeOn(d: Direction, t: Test, body: Body, what: string): void {
  const zod = d.zod(body);
  const fast = d.fast(body);
  t.equal(fast.ok, zod.success, what);
  if (fast.ok && zod.success) t.same(fast.message, zod.data, `${what}: the same message`);
}
const agree = (t: Test, body: Body, what: string): void => agreeOn(CLIENT, t, body, what);

t.test('hand-picked edges of client messages', async (t) => {
  const { heartbeat: hb, ack_commit: ack, nack_commit: nack, succeeded, failed_with_output: failed } = VALID;
  for (const [type, body] of Object.entries(VALID)) agree(t, body!, `a valid ${type}`);
  agree(t, { ...hb, job_state: 'running', job_id: 'a'.repeat(64) }, 'a running job, longest id');
  agree(t, { ...hb, job_id: 'a'.repeat(65) }, 'an id too long');
  agree(t, { ...hb, job_id: '' }, 'an empty id');
  agree(t, { ...hb, org: 'o'.repeat(255) }, 'longest org');
  agree(t, { ...hb, org: 'o'.repeat(256) }, 'org too long');
  agree(t, { ...hb, node: '' }, 'empty node');
  agree(t, { ...hb, sequence: -1 }, 'negative sequence');
  agree(t, { ...hb, sequence: 1.5 }, 'fractional sequence');
  agree(t, { ...hb, sequence: 2 ** 53 }, 'unsafe sequence');
  agree(t, { ...hb, sequence: '7' }, 'sequence as text');
  agree(t, { ...hb, incarnation_id: 'not-a-uuid' }, 'bad incarnation');
  agree(t, { ...hb, incarnation_id: envelope.incarnation_id.toUpperCase() }, 'upper-case incarnation');
  agree(t, { ...hb, timestamp: 'Sun, 21 Nov 2026 10:00:00 GMT' }, 'a weekday that does not match');
  agree(t, { ...hb, timestamp: '2026-11-21T10:00:00Z' }, 'an ISO time');
  agree(t, { ...hb, job_state: 'busy' }, 'unknown job_state');
  agree(t, { ...hb, extra: 1 }, 'an unknown field');
  const { job_id: _dropped, ...noJob } = hb!;
  agree(t, noJob, 'job_id missing');
  agree(t, { ...noJob, extra: null }, 'job_id missing and an unknown field in its place');
  agree(t, JSON.parse('{"__proto__":1}') as Record<string, unknown>, 'a __proto__ key only');
  agree(t, { ...ack, type: 'commit' }, 'a server message type');
  agree(t, { ...ack, job_id: null }, 'an ack without a job');
  agree(t, { ...ack, reason: 'busy' }, 'an ack with a reason');
  agree(t, { ...nack, reason: 'tired' }, 'an unknown nack reason');
  agree(t, { ...nack, reason: undefined }, 'a nack without a reason');
  agree(t, { ...succeeded, exit_status: null }, 'no exit status');
  agree(t, { ...succeeded, exit_status: -1.5 }, 'a fractional exit status');
  agree(t, { ...succeeded, exit_status: undefined }, 'exit_status missing');
  agree(t, { ...succeeded, stdout: 'x' }, 'stdout alone');
  agree(t, { ...failed, truncated: undefined }, 'output without truncated');
  agree(t, { ...failed, stdout: 'x'.repeat(65536) }, 'the longest stdout');
  agree(t, { ...failed, stderr: 'x'.repeat(65537) }, 'stderr too long');
  agree(t, { ...failed, truncated: 'no' }, 'truncated as text');
  agree(t, { ...VALID.aborted, job_id }, 'an abort of a job');
});

t.test('hand-picked edges of server messages', async (t) => {
  const agree = (body: Body, what: string): void => agreeOn(SERVER, t, body, what);
  const { heartbeat: hb, commit_with_all: full, run, abort } = VALID_SERVER;
  for (const [type, body] of Object.entries(VALID_SERVER)) agree(body!, `a valid ${type}`);
  agree({ ...hb, interval_ms: 0 }, 'a zero interval');
  agree({ ...hb, interval_ms: 2.5 }, 'a fractional interval');
  agree({ ...hb, server: '' }, 'an empty server name');
  agree({ ...hb, job_state: 'idle' }, "a client heartbeat's field");
  agree({ ...commit, run_timeout: 366 * 24 * 3600 }, 'the longest run_timeout');
  agree({ ...commit, run_timeout: 366 * 24 * 3600 + 1 }, 'a run_timeout too long');
  agree({ ...commit, run_timeout: -5 }, 'a negative run_timeout');
  agree({ ...commit, command: 'c'.repeat(256) }, 'a command too long');
  agree({ ...full, user: '' }, 'an empty user');
  agree({ ...full, user: null }, 'a null user');
  agree({ ...full, dir: '' }, 'an empty dir');
  agree({ ...full, dir: '/'.repeat(4096) }, 'the longest dir');
  agree({ ...full, dir: '/'.repeat(4097) }, 'a dir too long');
  agree({ ...full, env: {} }, 'an empty env');
  agree({ ...full, env: { '': 'x' } }, 'an env name empty');
  agree({ ...full, env: { ['N'.repeat(256)]: 'x' } }, 'an env name too long');
  agree({ ...full, env: { A: 'x'.repeat(65537) } }, 'an env value too long');
  agree({ ...full, env: { A: null } }, 'a null env value');
  agree({ ...full, env: ['A'] }, 'an env list');
  agree({ ...full, env: 'A=1' }, 'an env text');
  agree({ ...full, file: 'raw:' }, 'an empty raw file');
  agree({ ...full, file: 'RAW:x' }, 'a file prefix in capitals');
  agree({ ...full, file: `raw:${'x'.repeat(65532)}` }, 'the longest file');
  agree({ ...full, file: `raw:${'x'.repeat(65533)}` }, 'a file too long');
  agree({ ...full, capture: 1 }, 'capture as a number');
  agree({ ...run, job_id: null }, 'a run without a job');
  agree({ ...abort, job_id: 'a'.repeat(65) }, 'an abort of an id too long');
  agree({ ...VALID_SERVER.node_in_use, retry_after_ms: 0 }, 'retry at once');
  agree({ ...VALID_SERVER.ack_result, job_id: null }, 'an ack of no result');
  agree({ ...VALID_SERVER.ack_result, exit_status: 0 }, 'an ack that repeats the result');
  agree({ ...run, type: 'ack_run' }, 'a client message type');
  agree({ ...run, sequence: -1 }, 'a negative sequence');
  agree({ ...run, timestamp: 'yesterday' }, 'a timestamp that is no HTTP-date');
});

for (const [side, d] of [
  ['client', CLIENT],
  ['server', SERVER],
] as const) {
  t.test(`generated ${side} messages with one field changed, dropped or added`, async (t) => {
    const keys = [...new Set(Object.values(d.valid).flatMap((m) => Object.keys(m)))];
    const value = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer({ min: -3, max: 2 ** 53 + 2 }),
      fc.double(),
      fc.string({ maxLength: 300 }),
      fc.constantFrom('raw:x', 'base64:', 'raw', '/srv'),
      fc.uuid(),
      fc
        .date({ min: new Date(0), max: new Date(Date.UTC(2100, 0, 1)), noInvalidDate: true })
        .map((d) => httpDate(d.getTime())),
      fc.constantFrom('idle', 'committed', 'running', 'busy', ...Object.keys(d.valid), 'failed'),
      fc.array(fc.string(), { maxLength: 2 }),
      fc.dictionary(fc.string({ maxLength: 3 }), fc.oneof(fc.string({ maxLength: 3 }), fc.integer()), {
        maxKeys: 3,
      }),
    );
    let checked = 0;
    let accepted = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(d.valid)),
        fc.constantFrom('set', 'drop', 'add'),
        fc.constantFrom(...keys),
        fc.string(),
        value,
        (type, how, f, extra, v) => {
          const body: Body = { ...d.valid[type] };
          if (how === 'set') body[f] = v;
          else if (how === 'drop') delete body[f];
          else body[`x${extra}`] = v;
          const zod = d.zod(body).success;
          checked += 1;
          if (zod) accepted += 1;
          return d.fast(body).ok === zod;
        },
      ),
      { seed: 20261124, numRuns: 20000 },
    );
    t.equal(checked, 20000, 'every generated case agreed');
    t.ok(accepted > 1000 && accepted < 19000, `both valid and invalid cases were generated (${accepted} valid)`);
  });
}
