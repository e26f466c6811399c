// What push-jobs actors need from outside the tree, given to them at spawn: the transport that signs and writes
// to nodes and hands out session keys, the store, the clock, and where crashes and ignored events are counted.
import type { VotesRecovered } from '../../src/api/status-schema.js';
import type { PushCluster } from '../../src/cluster/push-cluster.js';
import type { FeedHub } from '../../src/feeds/feed-hub.js';
import type { Counters } from '../../src/lib/counters.js';
import type { Logger } from '../../src/lib/logger.js';
import type { Timers } from '../../src/lib/timers.js';
import type { OutboundMessage, PushDescription } from '../../src/protocol/node-messages.js';
import type { Store } from '../../src/store/store.js';
import type { CrashReporter } from '../shared/supervision.js';

// The job messages and the channels' description are plain shapes the transport and the cluster carry too.
export type { NodeAnswerMessage, OutboundMessage, PushDescription } from '../../src/protocol/node-messages.js';

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
  /** How late a schedule's missed occurrence may still fire (schedule_catchup, in ms; 0 fires none). */
  schedule_catchup_ms?: number;
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

/** What the push-jobs transport offers the actors: the one way to a node, and the key a node connects with. */
export interface PushTransport {
  /**
   * Signs and writes one message to a node on the command channel; a node not connected misses it. A commit
   * carries `voteBy`, when its job stops counting votes, and is reported written with it to the node's follower:
   * until then, its machine has it written again to a node that is heard but has not answered it (the commit, or the
   * node's answer, was lost on the way).
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
  /** This process's channels as nodes reach them. */
  describe(): PushDescription;
}

/**
 * How far behind this server is in hearing its nodes now (ms), in two parts that count differently. `backlog`:
 * heartbeats have waited unread this long; a server wedged behind them for good must still find dead nodes, so it
 * stretches the offline window by LAG_ALLOWANCE_WINDOWS windows at most (node-machine.ts). `stall`: the process
 * stood still this long a moment ago (its event loop held up, or the process paused: SIGSTOP, a frozen VM); no node
 * could be heard then, so all of it counts, and for as long as it lasted only, as the meter holds it
 * (src/transport/lag-meter.ts).
 */
export interface ServerLag {
  readonly backlog: number;
  readonly stall: number;
}

export const NO_LAG: ServerLag = Object.freeze({ backlog: 0, stall: 0 });

/** How far behind this server reads node heartbeats, and what a node's silence was judged against it. */
export interface ServerLagMeter {
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
}

/** Where node followers count the votes they recovered from heartbeats (`votes_recovered` of GET /_status). */
export interface VoteCounter {
  recovered(how: keyof VotesRecovered): void;
}

/** The organizations the transport serves here (their session keys, their nodes' connections), as they come and go. */
export interface TransportOrgs {
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
  /**
   * The organization is served by another process now, but its nodes stay connected here: their messages go to
   * the new owner through this process's gateway.
   */
  releaseOrg(org: string): void;
}

/** What the push-jobs parts of a process give the actor tree at start (see PushPorts). */
export interface PushParts {
  transport: PushTransport;
  orgs: TransportOrgs;
  settings: PushSettings;
  lag: ServerLagMeter;
  cluster: PushCluster;
  votes: VoteCounter;
}

export interface PushPorts {
  transport: PushTransport;
  settings: PushSettings;
  lag: ServerLagMeter;
  cluster: PushCluster;
  votes: VoteCounter;
  store: Store;
  now: () => number;
  /** The timers of the push actors (a job's deadlines, the supervisor's ticks, a finished job's linger). */
  timers: Timers;
  reporter: CrashReporter;
  /** `job_ignored` and `node_ignored` by reason: events an actor chose not to act on. */
  counters: Counters;
  log: Logger;
  /** Where job actors publish what their machine says, for the feeds' readers. */
  feeds: FeedHub;
}
