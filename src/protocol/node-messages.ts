// The job messages as the server's parts hand them to each other, without the envelope: one to a node before the
// transport adds its envelope, and a node's answer once the transport verified it; with the channels a node
// connects to. The actors, the transport and the cluster's streams all carry them, so they live below all three.
import type { Abort, AckResult, ClientMessage, Commit, Envelope, NodeAnswerType, Run } from './messages.js';

/** A message's own fields: each of a union's members without the envelope. */
type Unenveloped<M> = M extends unknown ? Omit<M, keyof Envelope> : never;

/** Server-to-node job messages, before the transport adds the envelope (org, node, sequence, timestamp). */
export type OutboundMessage = Unenveloped<Commit | Run | Abort | AckResult>;

/** A node's answer to a job message, after the transport verified and decoded it. */
export interface NodeAnswerMessage {
  type: NodeAnswerType;
  job_id: string | null;
  exit_status?: number | null;
  stdout?: string;
  stderr?: string;
  truncated?: boolean;
  reason?: string;
}

/** A verified answer as the actors take it: its own fields, without the envelope. */
export function nodeAnswerOf(m: Exclude<ClientMessage, { type: 'heartbeat' }>): NodeAnswerMessage {
  const answer: NodeAnswerMessage = { type: m.type, job_id: m.job_id };
  if ('exit_status' in m) answer.exit_status = m.exit_status;
  if ('stdout' in m && m.stdout !== undefined) answer.stdout = m.stdout;
  if ('stderr' in m && m.stderr !== undefined) answer.stderr = m.stderr;
  if ('truncated' in m && m.truncated !== undefined) answer.truncated = m.truncated;
  if ('reason' in m) answer.reason = m.reason;
  return answer;
}

/** The channel addresses, keys and identity a node needs to connect (the config endpoint's body). */
export interface PushDescription {
  heartbeat_addr: string;
  command_addr: string;
  curve_public_key: string | null;
  incarnation_id: string;
  max_message_skew: number;
  max_body_size: number;
  server_name: string;
}
