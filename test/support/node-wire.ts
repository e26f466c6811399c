// What a scripted test node writes: the messages that carry each answer to a server message, and the ways
// a broken or hostile client damages a message on the wire (test-node.ts sends them).
import { randomBytes } from 'node:crypto';
import { httpDate } from '../../src/lib/dates.js';
import { encodeMessage } from '../../src/protocol/frames.js';
import type { NackCommitReason, ServerMessage } from '../../src/protocol/messages.js';

/** What the node does with one server message. */
export type Answer =
  | { kind: 'ack' } // commit: ack_commit; run: ack_run and keep running; abort: aborted
  | { kind: 'nack'; reason: NackCommitReason } // commit: nack_commit; run: nack_run
  | { kind: 'ignore' }
  | { kind: 'crash' } // stop heartbeating and close both sockets, answering nothing
  | { kind: 'succeed'; stdout?: string; stderr?: string } // run: ack_run, then succeeded
  | { kind: 'fail'; exit_status: number; stdout?: string; stderr?: string } // run: ack_run, then failed
  | { kind: 'late'; ms: number; answer: Answer } // the answer after a delay
  | { kind: 'replay' } // resend the node's previous command-channel message, byte for byte
  | { kind: 'tamper'; how: Tamper; answer: Answer }; // the answer's messages, damaged on the wire

/** The answers that put messages on the wire. */
export type WireAnswer = Extract<Answer, { kind: 'ack' | 'nack' | 'succeed' | 'fail' }>;

/**
 * forge: signed with a wrong key; unsigned: no Signature in the header; oversize: body past max_body_size;
 * malformed: a body that is not JSON; bad_body: signed, but not a valid message; skew: signed, but dated a
 * minute beyond max_message_skew ago.
 */
export type Tamper = 'forge' | 'unsigned' | 'oversize' | 'malformed' | 'bad_body' | 'skew';

export type JobMessage = Extract<ServerMessage, { type: 'commit' | 'run' | 'abort' }>;
export type SentMessage = { type: string; job_id?: string | null; [field: string]: unknown };

/** The job a node holds, as its heartbeats report it. */
export interface HeldJob {
  state: 'idle' | 'committed' | 'running';
  id: string | null;
  capture: boolean;
}

export const IDLE: HeldJob = { state: 'idle', id: null, capture: false };

/** The messages that carry answer `a` to `m`, and the job the node holds once they are sent. */
export function answerMessages(
  m: JobMessage,
  a: WireAnswer,
  held: HeldJob,
): { messages: SentMessage[]; held: HeldJob } {
  if (m.type === 'abort') {
    if (a.kind !== 'ack') throw new Error(`an abort is answered with ack, not ${a.kind}`);
    // A null job_id aborts whatever the node holds; the answer names it (reference 2.7).
    const drops = m.job_id === null || m.job_id === held.id;
    return { messages: [{ type: 'aborted', job_id: m.job_id ?? held.id }], held: drops ? IDLE : held };
  }
  const job_id = m.job_id;
  if (m.type === 'commit') {
    if (a.kind === 'nack') return { messages: [{ type: 'nack_commit', job_id, reason: a.reason }], held };
    if (a.kind !== 'ack') throw new Error(`a commit is answered with ack or nack, not ${a.kind}`);
    return {
      messages: [{ type: 'ack_commit', job_id }],
      held: { state: 'committed', id: job_id, capture: m.capture === true },
    };
  }
  if (a.kind === 'nack') return { messages: [{ type: 'nack_run', job_id }], held };
  const capture = held.id === job_id && held.capture;
  if (a.kind === 'ack')
    return { messages: [{ type: 'ack_run', job_id }], held: { state: 'running', id: job_id, capture } };
  const exit_status = a.kind === 'succeed' ? 0 : a.exit_status;
  return { messages: [{ type: 'ack_run', job_id }, completion(job_id, exit_status, capture, a)], held: IDLE };
}

/** `succeeded` or `failed`; a job that asked for capture gets the output set, which always travels whole. */
export function completion(
  job_id: string,
  exit_status: number,
  capture: boolean,
  output: { stdout?: string; stderr?: string },
): SentMessage {
  const done: SentMessage = { type: exit_status === 0 ? 'succeeded' : 'failed', job_id, exit_status };
  if (capture) Object.assign(done, { stdout: output.stdout ?? '', stderr: output.stderr ?? '', truncated: false });
  return done;
}

/** The frames of `body` damaged as `how` says; `key` is the node's real session key. */
export function tamperedFrames(
  body: SentMessage,
  how: Tamper,
  key: Buffer,
  limits: { max_body_size: number; max_message_skew: number },
): Buffer[] {
  switch (how) {
    case 'forge':
      return encodeMessage(body, randomBytes(32));
    case 'unsigned':
      return [Buffer.from('Version:2.0;SigningMethod:hmac_sha256'), encodeMessage(body, key)[1]];
    case 'oversize':
      return encodeMessage({ ...body, padding: 'x'.repeat(limits.max_body_size) }, key);
    case 'malformed':
      return [encodeMessage(body, key)[0], Buffer.from('{"type": "ack_commit", ')];
    case 'bad_body':
      return encodeMessage({ ...body, unexpected: true }, key);
    case 'skew':
      return encodeMessage({ ...body, timestamp: httpDate(Date.now() - (limits.max_message_skew + 60) * 1000) }, key);
  }
}
