// The client heartbeat, checked by hand. It is most of what a server receives (one per node per interval), and
// the zod schema allocates a few kilobytes per check; this check allocates only the typed message. It accepts
// exactly what clientHeartbeatSchema accepts (test/unit/protocol-heartbeat.test.ts compares them).
import { parseHttpDate } from '../lib/clock.js';
import { CLIENT_JOB_STATES, MAX_JOB_ID_LENGTH, type ClientHeartbeat, type ClientJobState } from './messages.js';

const MAX_NAME_LENGTH = 255;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const FIELDS = 8; // type, org, node, incarnation_id, sequence, timestamp, job_state, job_id
const JOB_STATES: ReadonlySet<string> = new Set(CLIENT_JOB_STATES);

export type CheckedHeartbeat = { ok: true; message: ClientHeartbeat; sentAt: number } | { ok: false; detail: string };

const isJobState = (v: unknown): v is ClientJobState => typeof v === 'string' && JOB_STATES.has(v);
const name = (v: unknown): v is string => typeof v === 'string' && v.length >= 1 && v.length <= MAX_NAME_LENGTH;

/** `json`: a parsed message body (JSON.parse gives plain objects, so every value is unknown). */
export function checkClientHeartbeat(json: Record<string, unknown>): CheckedHeartbeat {
  let count = 0;
  for (const key in json) {
    if (!Object.hasOwn(json, key)) continue;
    count += 1;
    if (count > FIELDS) return { ok: false, detail: `unknown field '${key}'` };
  }
  const { type, org, node, incarnation_id, sequence, timestamp, job_state, job_id } = json;
  if (type !== 'heartbeat') return { ok: false, detail: "type: 'heartbeat'" };
  if (!name(org)) return { ok: false, detail: 'org: a name of 1 to 255 characters' };
  if (!name(node)) return { ok: false, detail: 'node: a name of 1 to 255 characters' };
  if (typeof incarnation_id !== 'string' || !UUID.test(incarnation_id))
    return { ok: false, detail: 'incarnation_id: a UUID' };
  if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 0)
    return { ok: false, detail: 'sequence: a whole number from 0' };
  const sentAt = typeof timestamp === 'string' ? parseHttpDate(timestamp) : undefined;
  if (typeof timestamp !== 'string' || sentAt === undefined) return { ok: false, detail: 'timestamp: an HTTP-date' };
  if (!isJobState(job_state)) return { ok: false, detail: `job_state: one of ${CLIENT_JOB_STATES.join(', ')}` };
  if (job_id !== null && !(typeof job_id === 'string' && job_id.length >= 1 && job_id.length <= MAX_JOB_ID_LENGTH))
    return { ok: false, detail: 'job_id: null or an id of 1 to 64 characters' };
  // Eight fields at most, and each of the eight checked above: so no field is missing and none is unknown.
  return {
    ok: true,
    sentAt,
    message: {
      type: 'heartbeat',
      org,
      node,
      incarnation_id,
      sequence,
      timestamp,
      job_state,
      job_id,
    },
  };
}
