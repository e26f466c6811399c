// GET /_status, the one unauthenticated endpoint: whether the server takes requests, its store, and the
// push-jobs transport's figures. Load balancers and scripts wait on `status`.
import { z } from 'zod';

/**
 * `starting` (503) until first-start setup and restore are done; `degraded` (503) while the store does not answer
 * or its operations fail: reads are answered from memory, writes refused, and pending saves wait for it.
 */
export const SERVER_STATUSES = ['pong', 'starting', 'degraded'] as const;

/** This process as a member of the processes sharing a Redis store (absent on the file store). */
export const clusterStatusSchema = z.object({
  member: z.string(),
  /** `active` while it owns partitions; `standby` while it owns none (it still answers, forwarding to owners). */
  role: z.enum(['active', 'standby']),
  /** The live members and how many partitions each holds. */
  members: z.array(
    z.object({
      id: z.string(),
      url: z.string(),
      host: z.string(),
      pid: z.int(),
      partitions: z.int().nonnegative(),
    }),
  ),
  /** How many partitions this process serves, the global one included. */
  partitions: z.int().nonnegative(),
  /** Which: `global`, `p0` … `p63` (an organization's is `p` and partitionOf(name), src/store/partitions.ts). */
  held: z.array(z.string()),
  lease_ttl_ms: z.int().positive(),
  redis_mode: z.enum(['single', 'cluster', 'sentinel']),
  /**
   * The streams between members, since this process started: entries skipped as unreadable, acknowledgements
   * refused because the partition's lease had passed (the entries wait for its owner), streams holding a backlog
   * nobody reads now, gateway orders refused as older than an owner heard since, and messages this process did not
   * send because its lease on their organization was in doubt. Absent while the process starts.
   */
  streams: z
    .object({
      skipped_entries: z.int().nonnegative(),
      fenced_acks: z.int().nonnegative(),
      backlogged: z.int().nonnegative(),
      stale_orders: z.int().nonnegative(),
      unsent_lease_in_doubt: z.int().nonnegative(),
      /** Node answers this member read as the owner with its lease in doubt, handed to the owner's inbox. */
      answers_relayed_lease_in_doubt: z.int().nonnegative(),
    })
    .optional(),
});
export type ClusterStatus = z.infer<typeof clusterStatusSchema>;
export type StreamFigures = NonNullable<ClusterStatus['streams']>;

/** Votes lost on the way and recovered: commits written again, and acks read from heartbeats. */
const votesRecoveredSchema = z.object({
  commit_resent: z.int().nonnegative(),
  ack_from_heartbeat: z.int().nonnegative(),
});
export type VotesRecovered = z.infer<typeof votesRecoveredSchema>;

/**
 * How far behind the server reads node heartbeats (queued unread, or its event loop held up): a node's silence
 * within the lag does not count toward `down`, and the downs it deferred are counted (once per silence).
 */
const pushLagSchema = z.object({
  /** The lag that lengthens the offline window now: the largest seen within the last offline window. */
  current_ms: z.int().nonnegative(),
  /** The largest lag seen since start. */
  max_ms: z.int().nonnegative(),
  /** Nodes kept `up` past the offline window because the server lagged. */
  downs_deferred: z.int().nonnegative(),
  /**
   * Nodes this process marked down since it started: silent past the offline window and the lag. With every node
   * beating, any is a down the server invented; the load tester reports them.
   */
  downs: z.int().nonnegative(),
});
export type PushLag = z.infer<typeof pushLagSchema>;

/**
 * A node's two connections: open now, refused in their handshake by reason (a Curve key no live session names,
 * past handshake_timeout, a failed handshake), closed after it (gone, silent, or a message past the size limit), and
 * held now: handshakes waiting a moment for a session to name their Curve key (a node that just moved here).
 */
const zmqConnectionsSchema = z.object({
  open: z.int().nonnegative(),
  refused: z.record(z.string(), z.int().nonnegative()),
  closed_after_handshake: z.int().nonnegative(),
  held: z.int().nonnegative().optional(),
});

/**
 * The open-file budget and what was refused to keep it: `files` (the process's soft and hard limit, files open now,
 * and the share kept for node connections) and HTTP refusals by reason, each reason the setting that refused it.
 */
const limitsSchema = z.object({
  files: z.object({
    limit: z.int().nonnegative(),
    hard_limit: z.int().nonnegative().nullable(),
    open: z.int().nonnegative(),
    node_connection_reserve: z.int().nonnegative(),
  }),
  http: z.object({
    /** HTTP connections open now, on every port of the API. */
    connections: z.int().nonnegative(),
    /** Event streams open now. */
    event_streams: z.int().nonnegative(),
    refused: z.record(z.string(), z.int().nonnegative()),
  }),
});
export type LimitsStatus = z.infer<typeof limitsSchema>;

export const serverStatusSchema = z.object({
  status: z.enum(SERVER_STATUSES),
  version: z.string(),
  store: z.object({ kind: z.enum(['file', 'redis']), state: z.enum(['ok', 'unavailable']) }).nullable(),
  organizations: z.int().nonnegative(),
  push_jobs: z
    .object({
      /** Nodes heard within the offline window. */
      connected_nodes: z.int().nonnegative(),
      /** Messages verified and delivered since start. */
      accepted: z.int().nonnegative(),
      /** Node heartbeats among the accepted messages. */
      heartbeats: z.int().nonnegative(),
      /** Optional for readers such as the load tester pointed at an earlier server, which does not report it. */
      votes_recovered: votesRecoveredSchema.optional(),
      /** Optional for the same readers. */
      lag: pushLagSchema.optional(),
      /** Dropped messages by reason since start. */
      dropped: z.record(z.string(), z.int().nonnegative()),
      /** The ZeroMQ connections: open now, refused in their handshake and closed after it (optional as above). */
      connections: zmqConnectionsSchema.optional(),
    })
    .nullable(),
  /** What the process refuses so that no peer can drain it (optional for readers of earlier servers). */
  limits: limitsSchema.optional(),
  cluster: clusterStatusSchema.optional(),
  /** What the actors met since start: crashes by actor kind, and events they chose not to act on, by reason. */
  actors: z
    .object({
      crashes: z.record(z.string(), z.int().nonnegative()),
      job_ignored: z.record(z.string(), z.int().nonnegative()),
      node_ignored: z.record(z.string(), z.int().nonnegative()),
      /** Schedules' occurrences by outcome: fired, skipped_overlap, missed (optional for readers of earlier servers). */
      schedule_firings: z.record(z.string(), z.int().nonnegative()).optional(),
    })
    .nullable(),
});
export type ServerStatusBody = z.infer<typeof serverStatusSchema>;
