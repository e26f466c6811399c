// Every push-jobs wire message as a strict zod schema: the server->client and client->server unions, and the envelope.
import { z } from 'zod';
import { httpDate } from '../lib/clock.js';

/** Longest job id accepted on the wire (reference 2.7: longer ids are invalid). */
export const MAX_JOB_ID_LENGTH = 64;
const MAX_NAME_LENGTH = 255;
const MAX_PATH_LENGTH = 4096;
/** The longest text field (env value, file, stdout, stderr) a message may carry. */
export const MAX_TEXT_LENGTH = 65536;
/** Seconds; a year is far beyond any sane run_timeout and keeps the figure within timer range once in ms. */
const MAX_RUN_TIMEOUT = 366 * 24 * 3600;

export const CLIENT_JOB_STATES = ['idle', 'committed', 'running'] as const;
export type ClientJobState = (typeof CLIENT_JOB_STATES)[number];
export const NACK_COMMIT_REASONS = ['busy', 'not_whitelisted', 'bad_user', 'bad_dir', 'bad_file', 'no_server_heartbeat'] as const;
export type NackCommitReason = (typeof NACK_COMMIT_REASONS)[number];

const MONTHS = 'JanFebMarAprMayJunJulAugSepOctNovDec';
const WEEKDAYS = 'SunMonTueWedThuFriSat';
const DAY_MS = 86_400_000;

function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** Which 3-letter entry of `table` sits at s[at..at+3], compared by char code so nothing is allocated; -1 if none. */
function threeLetterIndex(table: string, s: string, at: number): number {
  const a = s.charCodeAt(at);
  const b = s.charCodeAt(at + 1);
  const c = s.charCodeAt(at + 2);
  for (let i = 0; i < table.length; i += 3) {
    if (table.charCodeAt(i) === a && table.charCodeAt(i + 1) === b && table.charCodeAt(i + 2) === c) return i / 3;
  }
  return -1;
}

function daysIn(month: number, year: number): number {
  if (month === 1) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 3 || month === 5 || month === 8 || month === 10 ? 30 : 31;
}

/**
 * Epoch ms of an IMF-fixdate (`Sat, 21 Nov 2026 10:35:19 GMT`, the form `httpDate` writes), or undefined.
 * Fixed offsets instead of Date.parse: it runs on every heartbeat, and Date.parse accepts many other forms
 * and rolls `31 Feb` over; here the weekday must match the date. Years before 1970 are refused (Date.UTC maps
 * two-digit years to 19xx).
 */
export function parseHttpDate(s: string): number | undefined {
  if (s.length !== 29 || s[3] !== ',' || s[4] !== ' ' || s[7] !== ' ' || s[11] !== ' ' || s[16] !== ' ') return undefined;
  if (s[19] !== ':' || s[22] !== ':' || s[25] !== ' ' || s[26] !== 'G' || s[27] !== 'M' || s[28] !== 'T') return undefined;
  const month = threeLetterIndex(MONTHS, s, 8);
  const day = digits(s, 5, 2);
  const year = digits(s, 12, 4);
  const hour = digits(s, 17, 2);
  const minute = digits(s, 20, 2);
  const second = digits(s, 23, 2);
  if (month < 0 || year < 1970 || hour < 0 || hour > 23 || minute < 0 || minute > 59) return undefined;
  if (second < 0 || second > 59) return undefined;
  if (day < 1 || day > daysIn(month, year)) return undefined;
  const ms = Date.UTC(year, month, day, hour, minute, second);
  // 1970-01-01 was a Thursday (index 4 in WEEKDAYS).
  const weekday = (((Math.floor(ms / DAY_MS) + 4) % 7) + 7) % 7;
  return threeLetterIndex(WEEKDAYS, s, 0) === weekday ? ms : undefined;
}

const name = z.string().min(1).max(MAX_NAME_LENGTH);
const jobId = z.string().min(1).max(MAX_JOB_ID_LENGTH);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// org and node already named a session key before any schema runs, so a length bound is all they need here.
const envelope = {
  org: name,
  node: name,
  incarnation_id: z.string().regex(UUID),
  sequence: z.int().nonnegative(),
  timestamp: z.string().refine((s) => parseHttpDate(s) !== undefined, 'timestamp must be an HTTP-date'),
};

/** The fields every message carries besides `type` and its own (decision: sequence per sender incarnation). */
export interface Envelope {
  org: string;
  node: string;
  incarnation_id: string;
  sequence: number;
  timestamp: string;
}

/** Builds the common fields for a message sent at `nowMs`. */
export function envelopeFor(org: string, node: string, incarnationId: string, sequence: number, nowMs: number): Envelope {
  return { org, node, incarnation_id: incarnationId, sequence, timestamp: httpDate(nowMs) };
}

// Server to client.
export const serverHeartbeatSchema = z.strictObject({
  type: z.literal('heartbeat'),
  ...envelope,
  server: name,
  interval_ms: z.int().positive(),
});
export type ServerHeartbeat = z.infer<typeof serverHeartbeatSchema>;

export const commitSchema = z.strictObject({
  type: z.literal('commit'),
  ...envelope,
  job_id: jobId,
  command: name,
  run_timeout: z.int().positive().max(MAX_RUN_TIMEOUT),
  user: name.optional(),
  dir: z.string().min(1).max(MAX_PATH_LENGTH).optional(),
  env: z.record(name, z.string().max(MAX_TEXT_LENGTH)).optional(),
  file: z.string().max(MAX_TEXT_LENGTH).regex(/^(raw|base64):/).optional(),
  capture: z.boolean().optional(),
});
export type Commit = z.infer<typeof commitSchema>;

export const runSchema = z.strictObject({ type: z.literal('run'), ...envelope, job_id: jobId });
export type Run = z.infer<typeof runSchema>;

/** A null job_id means: abort whatever is running. */
export const abortSchema = z.strictObject({ type: z.literal('abort'), ...envelope, job_id: jobId.nullable() });
export type Abort = z.infer<typeof abortSchema>;

export const serverMessageSchema = z.discriminatedUnion('type', [serverHeartbeatSchema, commitSchema, runSchema, abortSchema]);
export type ServerMessage = z.infer<typeof serverMessageSchema>;

// Client to server.
export const clientHeartbeatSchema = z.strictObject({
  type: z.literal('heartbeat'),
  ...envelope,
  job_state: z.enum(CLIENT_JOB_STATES),
  job_id: jobId.nullable(),
});
export type ClientHeartbeat = z.infer<typeof clientHeartbeatSchema>;

export const ackCommitSchema = z.strictObject({ type: z.literal('ack_commit'), ...envelope, job_id: jobId });
export type AckCommit = z.infer<typeof ackCommitSchema>;

export const nackCommitSchema = z.strictObject({
  type: z.literal('nack_commit'),
  ...envelope,
  job_id: jobId,
  reason: z.enum(NACK_COMMIT_REASONS),
});
export type NackCommit = z.infer<typeof nackCommitSchema>;

export const ackRunSchema = z.strictObject({ type: z.literal('ack_run'), ...envelope, job_id: jobId });
export type AckRun = z.infer<typeof ackRunSchema>;

export const nackRunSchema = z.strictObject({ type: z.literal('nack_run'), ...envelope, job_id: jobId });
export type NackRun = z.infer<typeof nackRunSchema>;

// Output comes as a set: a client that captured must also say whether it cut the output to fit (never silently).
const completion = {
  ...envelope,
  job_id: jobId,
  exit_status: z.int().nullable(),
  stdout: z.string().max(MAX_TEXT_LENGTH).optional(),
  stderr: z.string().max(MAX_TEXT_LENGTH).optional(),
  truncated: z.boolean().optional(),
};
const outputAllOrNone = (m: { stdout?: string; stderr?: string; truncated?: boolean }): boolean =>
  (m.stdout === undefined) === (m.stderr === undefined) && (m.stdout === undefined) === (m.truncated === undefined);
const OUTPUT_MESSAGE = 'stdout, stderr and truncated come together or not at all';

export const succeededSchema = z
  .strictObject({ type: z.literal('succeeded'), ...completion })
  .refine(outputAllOrNone, OUTPUT_MESSAGE);
export type Succeeded = z.infer<typeof succeededSchema>;

export const failedSchema = z.strictObject({ type: z.literal('failed'), ...completion }).refine(outputAllOrNone, OUTPUT_MESSAGE);
export type Failed = z.infer<typeof failedSchema>;

/** job_id is the job that was being aborted, or null when nothing was. */
export const abortedSchema = z.strictObject({ type: z.literal('aborted'), ...envelope, job_id: jobId.nullable() });
export type Aborted = z.infer<typeof abortedSchema>;

export const clientMessageSchema = z.discriminatedUnion('type', [
  clientHeartbeatSchema,
  ackCommitSchema,
  nackCommitSchema,
  ackRunSchema,
  nackRunSchema,
  succeededSchema,
  failedSchema,
  abortedSchema,
]);
export type ClientMessage = z.infer<typeof clientMessageSchema>;

export type ServerMessageType = ServerMessage['type'];
export type ClientMessageType = ClientMessage['type'];
