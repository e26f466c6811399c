// The entries of the Redis Streams between partition owners and node gateways (node-link.ts), one zod schema per
// shape. Owners write to a gateway's stream what to send to its nodes; gateways write to a partition's inbox what
// its nodes said. Both sides are this server's own processes, so a shape that does not parse is a version mismatch
// or a damaged store: it is counted and skipped, never applied.
import { z } from 'zod';
import { NODE_ANSWER_TYPES } from '../protocol/messages.js';

const availability = z.object({
  status: z.enum(['up', 'down']),
  available: z.boolean(),
  updated_at: z.number(),
  incarnation: z.string().nullable(),
  restarted: z.boolean(),
});

const answer = z.object({
  type: z.enum(NODE_ANSWER_TYPES),
  job_id: z.string().nullable(),
  exit_status: z.number().nullable().optional(),
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  truncated: z.boolean().optional(),
  reason: z.string().optional(),
});

/** What a gateway tells a partition's owner about one node of one of its organizations. */
export const gatewayReportSchema = z.discriminatedUnion('t', [
  /** The node is connected to this gateway now, in this state: the owner routes its messages here. */
  z.object({ t: z.literal('attached'), org: z.string(), node: z.string(), change: availability }),
  z.object({ t: z.literal('availability'), org: z.string(), node: z.string(), change: availability }),
  z.object({ t: z.literal('answer'), org: z.string(), node: z.string(), at: z.number(), message: answer }),
  /** The node's heartbeats name a job this gateway was never sent: the owner says whether it runs. */
  z.object({ t: z.literal('holds'), org: z.string(), node: z.string(), job: z.string() }),
]);
export type GatewayReport = z.infer<typeof gatewayReportSchema>;

/** One inbox entry: a gateway's events for one partition, as gathered in one turn. */
export const inboxEntrySchema = z.object({ gateway: z.string(), events: z.array(gatewayReportSchema) });
export type InboxEntry = z.infer<typeof inboxEntrySchema>;

/**
 * Every order names its organization and the epoch of the owner's lease on the organization's partition: a gateway
 * obeys no order older than the newest epoch it has seen for that partition, so a deposed owner (paused past its
 * lease, then woken) cannot move a node once its successor has spoken.
 */
const ordered = { org: z.string(), epoch: z.number().int().nonnegative() };

/** What an owner asks of a gateway. */
export const gatewayOrderSchema = z.discriminatedUnion('t', [
  /** One job message for some of the gateway's nodes, which it signs and writes per node. */
  z.object({
    t: z.literal('send'),
    ...ordered,
    nodes: z.array(z.string()),
    message: z.looseObject({
      type: z.enum(['commit', 'run', 'abort', 'ack_result']),
      job_id: z.string().nullable(),
    }),
    vote_by: z.number().optional(),
  }),
  /** A node's session changed (opened, renewed, or moved to another gateway): read it again. */
  z.object({ t: z.literal('session'), ...ordered, node: z.string() }),
  /** The organization has a new owner: say which of its nodes are connected here, and how they are. */
  z.object({ t: z.literal('roll_call'), ...ordered }),
  /** These jobs run no more (or never ran) here: a node that says it holds one is reset. */
  z.object({ t: z.literal('jobs_over'), ...ordered, jobs: z.array(z.string()) }),
  /**
   * The owner knows the node up, where the gateway's actor, made from a stored record older than that, says down:
   * the actor starts again from the owner's record (a node's up is written behind, and its jobs vouch for it).
   */
  z.object({
    t: z.literal('node_state'),
    ...ordered,
    node: z.string(),
    record: z.object({ status: z.enum(['up', 'down']), updated_at: z.number(), incarnation: z.string().nullable() }),
  }),
]);
export type GatewayOrder = z.infer<typeof gatewayOrderSchema>;

/**
 * One gateway stream entry: an owner's orders of one turn. Each order is read on its own (gatewayOrderSchema): one a
 * gateway does not know (a newer member's) is skipped, and the others of the turn still apply.
 */
export const gatewayEntrySchema = z.object({ owner: z.string(), orders: z.array(z.unknown()) });
