// The hand-written heartbeat check accepts exactly what clientHeartbeatSchema accepts: on hand-picked edges, and
// on generated heartbeats with one field changed, dropped or added (a fixed seed, so a failure repeats).
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { httpDate } from '../../src/lib/clock.js';
import { checkClientHeartbeat } from '../../src/protocol/heartbeat.js';
import { clientHeartbeatSchema } from '../../src/protocol/messages.js';

const valid = {
  type: 'heartbeat',
  org: 'default',
  node: 'web1',
  incarnation_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  sequence: 7,
  timestamp: httpDate(Date.UTC(2026, 10, 21, 10, 0, 0)),
  job_state: 'idle',
  job_id: null,
};

function agree(t: Test, body: Record<string, unknown>, what: string): void {
  const zod = clientHeartbeatSchema.safeParse(body);
  const fast = checkClientHeartbeat(body);
  t.equal(fast.ok, zod.success, what);
  if (fast.ok && zod.success) t.same(fast.message, zod.data, `${what}: the same message`);
}

t.test('hand-picked edges', async (t) => {
  agree(t, valid, 'a valid heartbeat');
  agree(t, { ...valid, job_state: 'running', job_id: 'a'.repeat(64) }, 'a running job, longest id');
  agree(t, { ...valid, job_id: 'a'.repeat(65) }, 'an id too long');
  agree(t, { ...valid, job_id: '' }, 'an empty id');
  agree(t, { ...valid, org: 'o'.repeat(255) }, 'longest org');
  agree(t, { ...valid, org: 'o'.repeat(256) }, 'org too long');
  agree(t, { ...valid, node: '' }, 'empty node');
  agree(t, { ...valid, sequence: -1 }, 'negative sequence');
  agree(t, { ...valid, sequence: 1.5 }, 'fractional sequence');
  agree(t, { ...valid, sequence: 2 ** 53 }, 'unsafe sequence');
  agree(t, { ...valid, sequence: '7' }, 'sequence as text');
  agree(t, { ...valid, incarnation_id: 'not-a-uuid' }, 'bad incarnation');
  agree(t, { ...valid, incarnation_id: valid.incarnation_id.toUpperCase() }, 'upper-case incarnation');
  agree(t, { ...valid, timestamp: 'Sun, 21 Nov 2026 10:00:00 GMT' }, 'a weekday that does not match');
  agree(t, { ...valid, timestamp: '2026-11-21T10:00:00Z' }, 'an ISO time');
  agree(t, { ...valid, job_state: 'busy' }, 'unknown job_state');
  agree(t, { ...valid, extra: 1 }, 'an unknown field');
  const { job_id: _dropped, ...noJob } = valid;
  agree(t, noJob, 'job_id missing');
  agree(t, { ...noJob, extra: null }, 'job_id missing and an unknown field in its place');
  agree(t, JSON.parse('{"__proto__":1}') as Record<string, unknown>, 'a __proto__ key only');
});

t.test('generated heartbeats with one field changed, dropped or added', async (t) => {
  const field = fc.constantFrom(...Object.keys(valid));
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
    fc.constantFrom('idle', 'committed', 'running', 'heartbeat'),
    fc.array(fc.string(), { maxLength: 2 }),
  );
  let checked = 0;
  fc.assert(
    fc.property(
      fc.oneof(fc.constant('set'), fc.constant('drop'), fc.constant('add')),
      field,
      fc.string(),
      value,
      (how, f, extra, v) => {
        const body: Record<string, unknown> = { ...valid };
        if (how === 'set') body[f] = v;
        else if (how === 'drop') delete body[f];
        else body[`x${extra}`] = v;
        const zod = clientHeartbeatSchema.safeParse(body).success;
        checked += 1;
        return checkClientHeartbeat(body).ok === zod;
      },
    ),
    { seed: 20261123, numRuns: 5000 },
  );
  t.equal(checked, 5000, 'every generated case agreed');
});
