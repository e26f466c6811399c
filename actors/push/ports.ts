// What push-jobs actors need from outside the tree, given to them at spawn: the transport that signs and writes
// to nodes and hands out session keys, the store, the clock, and where crashes and ignored events are counted.
import type { FeedHub } from '../../src/feeds/feed-hub.js';
import type { Counters } from '../../src/lib/counters.js';
import type { Logger } from '../../src/lib/logger.js';
import type { NodeAnswerType } from '../../src/protocol/messages.js';
import type { Store } from '../../src/store/store.js';
import type { CrashReporter } from '../shared/supervision.js';
import type { JobOptions } from './job-model.js';
import type { NodeRecord, ServerLag } from './node-machine.js';

/** Server-to-node job messages, before the transport adds the envelope (org, node, sequence, timestamp). */
export type OutboundMessage =
  | ({ type: 'commit'; job_id: string; command: string; run_timeout: number } & JobOptions)
  | { type: 'run'; job_id: string }
  | { type: 'abort'; job_id: string | null }
  /** The node's result for the job is stored, or never will be (docs/protocol.md, "Results until acknowledged"). */
  | { type: 'ack_result'; job_id: string };

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

export interface PushSettings {
  voting_timeout: number;
  heartbeat_interval: number;
  offline_threshold: number;
  online_threshold: number;
  /** Finished jobs older than this many days are purged; 0 keeps them. */
  job_retention_days: number;
  /**
   * Added to the time restored nodes have to be heard again, when organizations are taken over from another process
   * of a cluster (ms; 0 on one process): their clients first notice the silence, then fetch their config again
   * and back off while the partition has no owner, which lasts up to a lease.
   */
  takeover_grace_ms?: number;
}

/**
 * After a restart, the longest a node restored `up` is given to be heard again (push-runtime.ts), and so the
 * longest a message waits in the transport for its node to become reachable.
 */
export const RECONNECT_GRACE_MAX_MS = 60_000;

export interface SessionGrant {
  /** The 32-byte HMAC key of this node's session. */
  key: Buffer;
  /** Seconds the key has left. */
  lifetime: number;
  /** Where the node connects: its gateway's channels (in a cluster, any member's). */
  gateway: PushDescription;
  /**
   * The API URLs the node may ask (the config answer's `server_urls`): every live member's in a cluster, this
   * server's alone otherwise, each once.
   */
  servers: readonly string[];
  /**
   * The API URL of the member that is the node's gateway, as its nodes use it (the config answer's `gateway_url`):
   * a node whose gateway goes silent knows whether the server it asks is that member. Undefined on one process, or
   * when that member names none.
   */
  gatewayServer?: string;
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

/** What the push-jobs transport offers the actors. */
export interface PushTransport {
  readonly settings: PushSettings;
  /**
   * Signs and writes one message to a node on the command channel; a node not connected misses it. A commit
   * carries `voteBy`, when its job stops counting votes: until then it is written again to a node that is heard
   * but has not answered it (the commit, or the node's answer, was lost on the way).
   */
  send(org: string, node: string, message: OutboundMessage, voteBy?: number): void;
  /**
   * The node's session key for the config endpoint: the live key while at least half its lifetime remains
   * (a reader's fetch must not cut off the running node), else a new one, saved before it is handed out. `ccpk`,
   * the requester's Curve public key (Z85), is bound to the session: CurveZMQ admits only keys live sessions name.
   */
  openSession(org: string, node: string, ccpk?: string): Promise<SessionGrant>;
  /**
   * The node went down: what still waits for it to become reachable is let go. Its jobs have counted it gone, and
   * a commit written once it came back would ask it to vote in a job that no longer counts its vote.
   */
  nodeDown(org: string, node: string): void;
  /**
   * How far behind this server reads node heartbeats at `at` (ms, never negative): heartbeats waiting unread, or an
   * event loop held up (the process paused). A node's silence within it may be the server's doing, so it does not
   * count toward `down`.
   */
  lag(at: number): ServerLag;
  /** A node silent past the offline window was kept `up` because the server lagged (counted for GET /_status). */
  downDeferred(org: string, node: string): void;
  /** A node silent past the offline window and the server's lag was marked down (counted for GET /_status). */
  downMarked(org: string, node: string): void;
  /**
   * Loads the organization's stored session keys: this process serves it from now on, and its nodes' messages
   * verify without a new config. Called before the organization is reachable, so no key opened here is replaced.
   */
  openOrg(org: string): Promise<void>;
  /**
   * Forgets an organization's sessions and connections as held in memory (what the store holds stays): it was
   * deleted, so a new one of that name starts clean, or released, and another process serves it now.
   */
  closeOrg(org: string): void;
  describe(): PushDescription;
  /**
   * The member id of the node's gateway in a cluster (this process's own id included); undefined on one process,
   * and for a node whose session was never opened.
   */
  gatewayOf(org: string, node: string): string | undefined;
  /**
   * Whether `gateway` speaks for the node: it is the node's gateway of record, or that one is gone and the node was
   * heard at `gateway` since (which is recorded). A gateway the node left may hold its actor for a while, and that
   * actor's silence is not the node's.
   */
  heardAt(org: string, node: string, gateway: string): boolean;
  /**
   * The job runs no more: gateways that were sent its messages (or only `gateway`, which asked about it) reset a
   * node that still says it holds it.
   */
  jobOver(org: string, job: string, gateway?: string): void;
  /** Tells the node's gateway the owner's record of it: the gateway's actor started from an older one. */
  nodeState(org: string, node: string, gateway: string, record: NodeRecord): void;
  /** The organization was adopted here: every other gateway says which of its nodes it holds, and how they are. */
  rollCall(org: string): void;
  /**
   * The organization is served by another process now, but its nodes stay connected here: their messages go to
   * the new owner through this process's gateway.
   */
  releaseOrg(org: string): void;
}

/** Everything a job or node follower is given at spawn. */
export interface PushPorts {
  transport: PushTransport;
  store: Store;
  now: () => number;
  reporter: CrashReporter;
  /** `job_ignored` and `node_ignored` by reason: events an actor chose not to act on. */
  counters: Counters;
  log: Logger;
  /** Where job actors publish what their machine says, for the feeds' readers. */
  feeds: FeedHub;
}
