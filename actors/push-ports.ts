// What push-jobs actors need from outside the tree, given to them at spawn: the transport that signs and
// writes to nodes, the session keys the config endpoint hands out, the store and the clock.
import type { Store } from '../src/store/store.js';
import type { JobOptions } from './job-model.js';

/** Server-to-node job messages, before the transport adds the envelope (org, node, sequence, timestamp). */
export type OutboundMessage =
  | ({ type: 'commit'; job_id: string; command: string; run_timeout: number } & JobOptions)
  | { type: 'run'; job_id: string }
  | { type: 'abort'; job_id: string | null };

/** A node's answer to a job message, after the transport verified and decoded it. */
export interface NodeAnswerMessage {
  type: 'ack_commit' | 'nack_commit' | 'ack_run' | 'nack_run' | 'succeeded' | 'failed' | 'aborted';
  job_id: string | null;
  exit_status?: number | null;
  stdout?: string;
  stderr?: string;
  truncated?: boolean;
  reason?: string;
}

export interface PushSettings {
  voting_timeout: number;
  heartbeat_interval: number;
  offline_threshold: number;
  online_threshold: number;
}

export interface SessionGrant {
  /** The 32-byte HMAC key of this node's session. */
  key: Buffer;
  /** Seconds the key has left. */
  lifetime: number;
}

export interface PushPorts {
  store: Store;
  now: () => number;
  settings: PushSettings;
  /** Signs and writes one message to a node on the command channel; a node not connected misses it. */
  send(org: string, node: string, message: OutboundMessage): void;
  /** A fresh session key for a node (replacing any earlier one), saved before it is handed out. */
  /**
   * The node's session key for the config endpoint: the live key while at least half its lifetime remains
   * (a reader's fetch must not cut off the running node), else a new one, saved before it is handed out.
   */
  openSession(org: string, node: string): Promise<SessionGrant>;
  /** Forgets a deleted organization's sessions and connections, so a new one of that name starts clean. */
  closeOrg(org: string): void;
  /** The channel addresses, keys and identity a node needs to connect (the config endpoint's body). */
  describe(): PushDescription;
}

export interface PushDescription {
  heartbeat_addr: string;
  command_addr: string;
  curve_public_key: string | null;
  incarnation_id: string;
  max_message_skew: number;
  max_body_size: number;
  server_name: string;
}
