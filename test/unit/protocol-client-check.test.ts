// The hand-written check of client messages accepts exactly what clientMessageSchema accepts: on hand-picked
// edges of every message type, and on generated messages with one field changed, dropped or added (a fixed
// seed, so a failure repeats).
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { httpDate } from '../../src/lib/clock.js';
import { checkClientMessage } from '../../src/protocol/client-check.js';
import { clientMessageSchema } from '../../src/protocol/messages.js';

const envelope = {
  org: 'default',
  node: 'web1',
  incarnation_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  sequence: 7,
  timestamp: httpDate(Date.UTC(2026, 10, 21, 10, 0, 0)),
};
const job_id = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const output = { stdout: 'out', stderr: '', truncated: false };

/** One valid message of each type; completions both with and without output. */
const VALID: Record<string, Record<string, unknown>> = {
  heartbeat: { type: 'heartbeat', ...envelope, job_state: 'idle', job_id: null },
  ack_commit: { type: 'ack_commit', ...envelope, job_id },
  nack_commit: { type: 'nack_commit', ...envelope, job_id, reason: 'busy' },
  ack_run: { type: 'ack_run', ...envelope, job_id },
  nack_run: { type: 'nack_run', ...envelope, job_id },
  succeeded: { type: 'succeeded', ...envelope, job_id, exit_status: 0 },
  failed_with_output: { type: 'failed', ...envelope, job_id, exit_status: 3, ...output },
  aborted: { type: 'aborted', ...envelope, job_id: null },
};

function agree(t: Test, body: Record<string, unknown>, what: string): void {
  const zod = clientMessageSchema.safeParse(body);
  const fast = checkClientMessage(body);
  t.equal(fast.ok, zod.success, what);
  if (fast.ok && zod.success) t.same(fast.message, zod.data, `${what}: the same message`);
}

t.test('hand-picked edges', async (t) => {
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

t.test('generated messages with one field changed, dropped or added', async (t) => {
  const keys = [...new Set(Object.values(VALID).flatMap((m) => Object.keys(m)))];
  const value = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -3, max: 2 ** 53 + 2 }),
    fc.double(),
    fc.string({ maxLength: 300 }),
    fc.uuid(),
    fc
      .date({ min: new Date(0), max: new Date(Date.UTC(2100, 0, 1)), noInvalidDate: true })
      .map((d) => httpDate(d.getTime())),
    fc.constantFrom('idle', 'committed', 'running', 'busy', ...Object.keys(VALID), 'failed'),
    fc.array(fc.string(), { maxLength: 2 }),
  );
  let checked = 0;
  let accepted = 0;
  fc.assert(
    fc.property(
      fc.constantFrom(...Object.keys(VALID)),
      fc.constantFrom('set', 'drop', 'add'),
      fc.constantFrom(...keys),
      fc.string(),
      value,
      (type, how, f, extra, v) => {
        const body: Record<string, unknown> = { ...VALID[type] };
        if (how === 'set') body[f] = v;
        else if (how === 'drop') delete body[f];
        else body[`x${extra}`] = v;
        const zod = clientMessageSchema.safeParse(body).success;
        checked += 1;
        if (zod) accepted += 1;
        return checkClientMessage(body).ok === zod;
      },
    ),
    { seed: 20261124, numRuns: 20000 },
  );
  t.equal(checked, 20000, 'every generated case agreed');
  t.ok(accepted > 1000 && accepted < 19000, `both valid and invalid cases were generated (${accepted} valid)`);
});
