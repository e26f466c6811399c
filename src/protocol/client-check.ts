// Client messages checked by hand. They are all a server receives: a heartbeat per node per interval and, for
// every job, an ack and a result per node, 10,000 at once on a large fleet. The zod schemas allocate a few
// kilobytes per check; this check allocates only the typed message. It accepts exactly what clientMessageSchema
// accepts, with the same field named first (test/unit/protocol-client-check.test.ts compares them).
import { parseHttpDate } from '../lib/clock.js';
import {
  CLIENT_JOB_STATES,
  MAX_JOB_ID_LENGTH,
  MAX_TEXT_LENGTH,
  NACK_COMMIT_REASONS,
  type ClientMessage,
} from './messages.js';

const MAX_NAME_LENGTH = 255;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const JOB_STATES: ReadonlySet<unknown> = new Set(CLIENT_JOB_STATES);
const NACK_REASONS: ReadonlySet<unknown> = new Set(NACK_COMMIT_REASONS);

export type CheckedMessage = { ok: true; message: ClientMessage; sentAt: number } | { ok: false; detail: string };

type Check = (v: unknown) => boolean;
const name: Check = (v) => typeof v === 'string' && v.length >= 1 && v.length <= MAX_NAME_LENGTH;
const jobId: Check = (v) => typeof v === 'string' && v.length >= 1 && v.length <= MAX_JOB_ID_LENGTH;
const jobIdOrNull: Check = (v) => v === null || jobId(v);
const text: Check = (v) => typeof v === 'string' && v.length <= MAX_TEXT_LENGTH;

/** A field after the envelope: how it is checked, what a failure says, and whether it may be left out. */
interface Field {
  key: string;
  check: Check;
  detail: string;
  optional?: true;
}

const JOB_ID: Field = { key: 'job_id', check: jobId, detail: 'an id of 1 to 64 characters' };
const JOB_ID_OR_NULL: Field = { key: 'job_id', check: jobIdOrNull, detail: 'null or an id of 1 to 64 characters' };
const COMPLETION: readonly Field[] = [
  JOB_ID,
  {
    key: 'exit_status',
    check: (v) => v === null || (typeof v === 'number' && Number.isSafeInteger(v)),
    detail: 'null or a whole number',
  },
  { key: 'stdout', check: text, detail: 'text of at most 65536 characters', optional: true },
  { key: 'stderr', check: text, detail: 'text of at most 65536 characters', optional: true },
  { key: 'truncated', check: (v) => typeof v === 'boolean', detail: 'true or false', optional: true },
];

/** Each client message type and its own fields, as in messages.ts. */
const FIELDS: Readonly<Record<ClientMessage['type'], readonly Field[]>> = {
  heartbeat: [
    {
      key: 'job_state',
      check: (v) => JOB_STATES.has(v),
      detail: `one of ${CLIENT_JOB_STATES.join(', ')}`,
    },
    JOB_ID_OR_NULL,
  ],
  ack_commit: [JOB_ID],
  nack_commit: [JOB_ID, { key: 'reason', check: (v) => NACK_REASONS.has(v), detail: NACK_COMMIT_REASONS.join(', ') }],
  ack_run: [JOB_ID],
  nack_run: [JOB_ID],
  succeeded: COMPLETION,
  failed: COMPLETION,
  aborted: [JOB_ID_OR_NULL],
};
const ENVELOPE_KEYS = ['type', 'org', 'node', 'incarnation_id', 'sequence', 'timestamp'];
const KEYS: Readonly<Record<string, ReadonlySet<string>>> = Object.fromEntries(
  Object.entries(FIELDS).map(([type, fields]) => [type, new Set([...ENVELOPE_KEYS, ...fields.map((f) => f.key)])]),
);

const fail = (detail: string): CheckedMessage => ({ ok: false, detail });

/** `json`: a parsed message body (JSON.parse gives plain objects, so every value is unknown). */
export function checkClientMessage(json: Record<string, unknown>): CheckedMessage {
  const { type } = json;
  const fields = typeof type === 'string' && Object.hasOwn(FIELDS, type) ? FIELDS[type as ClientMessage['type']] : null;
  if (fields === null) return fail(`type: one of ${Object.keys(FIELDS).join(', ')}`);
  const { org, node, incarnation_id, sequence, timestamp } = json;
  if (!name(org)) return fail('org: a name of 1 to 255 characters');
  if (!name(node)) return fail('node: a name of 1 to 255 characters');
  if (typeof incarnation_id !== 'string' || !UUID.test(incarnation_id)) return fail('incarnation_id: a UUID');
  if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 0)
    return fail('sequence: a whole number from 0');
  const sentAt = typeof timestamp === 'string' ? parseHttpDate(timestamp) : undefined;
  if (sentAt === undefined) return fail('timestamp: an HTTP-date');
  for (const f of fields) {
    const v = json[f.key];
    if (v === undefined ? f.optional !== true : !f.check(v)) return fail(`${f.key}: ${f.detail}`);
  }
  const keys = KEYS[type as string] as ReadonlySet<string>;
  for (const key in json) if (Object.hasOwn(json, key) && !keys.has(key)) return fail(`unknown field '${key}'`);
  // Output comes as a set: stdout, stderr and truncated together or not at all.
  if (fields === COMPLETION) {
    const given =
      Number(json.stdout !== undefined) + Number(json.stderr !== undefined) + Number(json.truncated !== undefined);
    if (given !== 0 && given !== 3) return fail('stdout, stderr and truncated come together or not at all');
  }
  // Every key is known and every required one was checked: the object is the message.
  return { ok: true, sentAt, message: json as unknown as ClientMessage };
}
