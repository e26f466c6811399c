// Push-jobs messages checked by hand, both ways. A server receives a heartbeat per node per interval and, for
// every job, an ack and a result per node, 10,000 at once on a large fleet; a load tester's worker receives the
// server's side of all that for thousands of nodes. The zod schemas allocate a few kilobytes per check; this
// check allocates only the answer. Each function accepts exactly what its zod union in messages.ts accepts
// (test/unit/protocol-message-check.test.ts compares them on hand-picked and generated messages).
import { parseHttpDate } from '../lib/dates.js';
import {
  CLIENT_JOB_STATES,
  FILE_CONTENT,
  MAX_JOB_ID_LENGTH,
  MAX_NAME_LENGTH,
  MAX_PATH_LENGTH,
  MAX_RUN_TIMEOUT,
  MAX_TEXT_LENGTH,
  NACK_COMMIT_REASONS,
  UUID,
  type ClientMessage,
  type ServerMessage,
} from './messages.js';

export type CheckedMessage<M> = { ok: true; message: M; sentAt: number } | { ok: false; detail: string };

type Check = (v: unknown) => boolean;
const name: Check = (v) => typeof v === 'string' && v.length >= 1 && v.length <= MAX_NAME_LENGTH;
const jobId: Check = (v) => typeof v === 'string' && v.length >= 1 && v.length <= MAX_JOB_ID_LENGTH;
const jobIdOrNull: Check = (v) => v === null || jobId(v);
const text: Check = (v) => typeof v === 'string' && v.length <= MAX_TEXT_LENGTH;
const positive: Check = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
const oneOf = (values: readonly string[]): Check => {
  const set: ReadonlySet<unknown> = new Set(values);
  return (v) => set.has(v);
};
/** A JSON object of names to texts (JSON.parse gives plain objects, so `for in` sees only its own keys). */
const namesToTexts: Check = (v) => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  for (const key in v) if (!name(key) || !text((v as Record<string, unknown>)[key])) return false;
  return true;
};

/** A field after the envelope: how it is checked, what a failure says, and whether it may be left out. */
interface Field {
  key: string;
  check: Check;
  detail: string;
  optional?: true;
}

const NAME = `a name of 1 to ${MAX_NAME_LENGTH} characters`;
const TEXT = `text of at most ${MAX_TEXT_LENGTH} characters`;
const ID = `an id of 1 to ${MAX_JOB_ID_LENGTH} characters`;
const JOB_ID: Field = { key: 'job_id', check: jobId, detail: ID };
const JOB_ID_OR_NULL: Field = { key: 'job_id', check: jobIdOrNull, detail: `null or ${ID}` };
const COMPLETION: readonly Field[] = [
  JOB_ID,
  {
    key: 'exit_status',
    check: (v) => v === null || (typeof v === 'number' && Number.isSafeInteger(v)),
    detail: 'null or a whole number',
  },
  { key: 'stdout', check: text, detail: TEXT, optional: true },
  { key: 'stderr', check: text, detail: TEXT, optional: true },
  { key: 'truncated', check: (v) => typeof v === 'boolean', detail: 'true or false', optional: true },
];

/** Each client message type and its own fields, as in messages.ts. */
const CLIENT_FIELDS: Readonly<Record<ClientMessage['type'], readonly Field[]>> = {
  heartbeat: [
    { key: 'job_state', check: oneOf(CLIENT_JOB_STATES), detail: `one of ${CLIENT_JOB_STATES.join(', ')}` },
    JOB_ID_OR_NULL,
  ],
  ack_commit: [JOB_ID],
  nack_commit: [JOB_ID, { key: 'reason', check: oneOf(NACK_COMMIT_REASONS), detail: NACK_COMMIT_REASONS.join(', ') }],
  ack_run: [JOB_ID],
  nack_run: [JOB_ID],
  succeeded: COMPLETION,
  failed: COMPLETION,
  aborted: [JOB_ID_OR_NULL],
};

/** Each server message type and its own fields, as in messages.ts. */
const SERVER_FIELDS: Readonly<Record<ServerMessage['type'], readonly Field[]>> = {
  heartbeat: [
    { key: 'server', check: name, detail: NAME },
    { key: 'interval_ms', check: positive, detail: 'a whole number above 0' },
  ],
  commit: [
    JOB_ID,
    { key: 'command', check: name, detail: NAME },
    {
      key: 'run_timeout',
      check: (v) => positive(v) && (v as number) <= MAX_RUN_TIMEOUT,
      detail: `a whole number of seconds from 1 to ${MAX_RUN_TIMEOUT}`,
    },
    { key: 'user', check: name, detail: NAME, optional: true },
    {
      key: 'dir',
      check: (v) => typeof v === 'string' && v.length >= 1 && v.length <= MAX_PATH_LENGTH,
      detail: `a path of 1 to ${MAX_PATH_LENGTH} characters`,
      optional: true,
    },
    { key: 'env', check: namesToTexts, detail: `names (${NAME}) to texts (${TEXT})`, optional: true },
    {
      key: 'file',
      check: (v) => text(v) && FILE_CONTENT.test(v as string),
      detail: `raw: or base64: and ${TEXT}`,
      optional: true,
    },
    { key: 'capture', check: (v) => typeof v === 'boolean', detail: 'true or false', optional: true },
  ],
  run: [JOB_ID],
  abort: [JOB_ID_OR_NULL],
  node_in_use: [{ key: 'retry_after_ms', check: positive, detail: 'a whole number above 0' }],
  ack_result: [JOB_ID],
};

const ENVELOPE_KEYS = ['type', 'org', 'node', 'incarnation_id', 'sequence', 'timestamp'];

/** One direction's check: the envelope, then the type's own fields, then no key beyond them. */
function checker<M>(
  table: Readonly<Record<string, readonly Field[]>>,
  refine: (fields: readonly Field[], json: Record<string, unknown>) => string | undefined = () => undefined,
): (json: Record<string, unknown>) => CheckedMessage<M> {
  const keysOf: Readonly<Record<string, ReadonlySet<string>>> = Object.fromEntries(
    Object.entries(table).map(([type, fields]) => [type, new Set([...ENVELOPE_KEYS, ...fields.map((f) => f.key)])]),
  );
  const types = `type: one of ${Object.keys(table).join(', ')}`;
  const fail = (detail: string): CheckedMessage<M> => ({ ok: false, detail });
  return (json) => {
    const { type } = json;
    const fields = typeof type === 'string' && Object.hasOwn(table, type) ? table[type] : undefined;
    if (fields === undefined) return fail(types);
    const { org, node, incarnation_id, sequence, timestamp } = json;
    if (!name(org)) return fail(`org: ${NAME}`);
    if (!name(node)) return fail(`node: ${NAME}`);
    if (typeof incarnation_id !== 'string' || !UUID.test(incarnation_id)) return fail('incarnation_id: a UUID');
    if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 0)
      return fail('sequence: a whole number from 0');
    const sentAt = typeof timestamp === 'string' ? parseHttpDate(timestamp) : undefined;
    if (sentAt === undefined) return fail('timestamp: an HTTP-date');
    for (const f of fields) {
      const v = json[f.key];
      if (v === undefined ? f.optional !== true : !f.check(v)) return fail(`${f.key}: ${f.detail}`);
    }
    const keys = keysOf[type as string] as ReadonlySet<string>;
    for (const key in json) if (Object.hasOwn(json, key) && !keys.has(key)) return fail(`unknown field '${key}'`);
    const refused = refine(fields, json);
    if (refused !== undefined) return fail(refused);
    // Every key is known and every required one was checked: the object is the message.
    return { ok: true, sentAt, message: json as M };
  };
}

/** `json`: a parsed message body (JSON.parse gives plain objects, so every value is unknown). */
export const checkClientMessage = checker<ClientMessage>(CLIENT_FIELDS, (fields, json) => {
  if (fields !== COMPLETION) return undefined;
  // Output comes as a set: stdout, stderr and truncated together or not at all.
  const given =
    Number(json.stdout !== undefined) + Number(json.stderr !== undefined) + Number(json.truncated !== undefined);
  return given !== 0 && given !== 3 ? 'stdout, stderr and truncated come together or not at all' : undefined;
});

/** As checkClientMessage, for what a node receives. */
export const checkServerMessage = checker<ServerMessage>(SERVER_FIELDS);
