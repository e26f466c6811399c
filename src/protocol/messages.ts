// Every push-jobs wire message as a strict zod schema: the server->client and client->server unions, and the envelope.
import { z } from 'zod';
import { httpDate, parseHttpDate } from '../lib/dates.js';

/** Longest job id accepted on the wire (reference 2.7: longer ids are invalid). */
export const MAX_JOB_ID_LENGTH = 64;
export const MAX_NAME_LENGTH = 255;
export const MAX_PATH_LENGTH = 4096;
/** The longest text field (env value, file, stdout, stderr) a message may carry. */
export const MAX_TEXT_LENGTH = 65536;
/** Seconds; a year is far beyond any sane run_timeout and keeps the figure within timer range once in ms. */
export const MAX_RUN_TIMEOUT = 366 * 24 * 3600;

export const CLIENT_JOB_STATES = ['idle', 'committed', 'running'] as const;
export type ClientJobState = (typeof CLIENT_JOB_STATES)[number];
export const NACK_COMMIT_REASONS = [
  'busy',
  'not_whitelisted',
  'bad_user',
  'bad_dir',
  'bad_file',
  'no_server_heartbeat',
] as const;
export type NackCommitReason = (typeof NACK_COMMIT_REASONS)[number];

const name = z.string().min(1).max(MAX_NAME_LENGTH);
const jobId = z.string().min(1).max(MAX_JOB_ID_LENGTH);
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
export function envelopeFor(
  org: string,
  node: string,
  incarnationId: string,
  sequence: number,
  nowMs: number,
): Envelope {
  return { org, node, incarnation_id: incarnationId, sequence, timestamp: httpDate(nowMs) };
}

/**
 * A message's own fields followed by its envelope, in that order on the wire. Object.assign rather than a spread
 * of both: V8 makes the spread of two objects into one that JSON.stringify serializes about five times slower
 * (3 µs more for each message the server, the client and the load tester sign).
 */
export function enveloped<T extends object>(body: T, envelope: Envelope): T & Envelope {
  return Object.assign({}, body, envelope);
}

// Server to client.
/** A commit's file is its content, prefixed by how it is written. */
export const FILE_CONTENT = /^(raw|base64):/;
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
  file: z.string().max(MAX_TEXT_LENGTH).regex(FILE_CONTENT).optional(),
  capture: z.boolean().optional(),
});
export type Commit = z.infer<typeof commitSchema>;

export const runSchema = z.strictObject({ type: z.literal('run'), ...envelope, job_id: jobId });
export type Run = z.infer<typeof runSchema>;

/** A null job_id means: abort whatever is running. */
export const abortSchema = z.strictObject({ type: z.literal('abort'), ...envelope, job_id: jobId.nullable() });
export type Abort = z.infer<typeof abortSchema>;

/**
 * Another process of this node's client holds the node (its incarnation is live): this one's messages are
 * refused until that one has been silent for the offline window, about `retry_after_ms` from now.
 */
export const nodeInUseSchema = z.strictObject({
  type: z.literal('node_in_use'),
  ...envelope,
  retry_after_ms: z.int().positive(),
});
export type NodeInUse = z.infer<typeof nodeInUseSchema>;

/**
 * The owner of the node's job is done with the node's result for it (`succeeded` or `failed`): the job has stored
 * it, or runs no more and never will take it. The client stops sending that result again.
 */
export const ackResultSchema = z.strictObject({ type: z.literal('ack_result'), ...envelope, job_id: jobId });
export type AckResult = z.infer<typeof ackResultSchema>;

export const serverMessageSchema = z.discriminatedUnion('type', [
  serverHeartbeatSchema,
  commitSchema,
  runSchema,
  abortSchema,
  nodeInUseSchema,
  ackResultSchema,
]);
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

export const failedSchema = z
  .strictObject({ type: z.literal('failed'), ...completion })
  .refine(outputAllOrNone, OUTPUT_MESSAGE);
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
/** A node's answer to a job message: every client message but its heartbeat. */
export type NodeAnswerType = Exclude<ClientMessageType, 'heartbeat'>;
/** Every answer type, for the shapes that carry a node's answer on between this server's processes. */
export const NODE_ANSWER_TYPES = [
  'ack_commit',
  'nack_commit',
  'ack_run',
  'nack_run',
  'succeeded',
  'failed',
  'aborted',
] as const satisfies readonly NodeAnswerType[];
