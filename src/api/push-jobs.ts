// The push-jobs REST bodies (spec 2.4, 2.5, 3, 4.1; reference 3, 6), one zod schema each: the server types what
// it answers with them and validates what it takes; the cli, push-jobs-client, the load tester and the tests read
// answers through them. Readers ignore fields they do not know, so the server may add some.
import { z } from 'zod';
import { commitSchema } from '../protocol/messages.js';
import { JOB_STATUSES, NODE_JOB_STATUSES } from '../push/job-states.js';
import { httpDateSchema } from './http-date.js';
import { rolloutSchema, rolloutViewSchema } from './rollout.js';

export { httpDateSchema };

const NODE_NAME = /^[A-Za-z0-9_.:-]+$/;

/** POST /organizations/ORG/pushy/jobs. Unknown fields are refused. */
// The command and every option travel to the nodes in the commit message, so nothing here may exceed what a
// node accepts there (messages.ts commitSchema); the total size is checked when the job starts.
export const jobStartSchema = z.strictObject({
  command: commitSchema.shape.command,
  nodes: z.array(z.string().regex(NODE_NAME)).min(1), // at most max_job_nodes, a server setting
  run_timeout: z.int().positive().max(31_536_000).default(3600),
  quorum: z.union([z.int().nonnegative(), z.string().regex(/^\d+%?$/)]).optional(),
  voting_timeout: z.int().positive().optional(),
  capture_output: z.boolean().optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,254}$/), z.string()).optional(),
  dir: z.string().regex(/^\//).max(4096).optional(),
  user: z
    .string()
    .regex(/^[a-z_][a-z0-9_.-]*\$?$/i)
    .max(64)
    .optional(),
  file: z
    .string()
    .regex(/^(raw|base64):/s)
    .max(60_000)
    .optional(),
  /** Run in waves (src/api/rollout.ts); without it, on every node at once. */
  rollout: rolloutSchema.optional(),
});
/** What a caller sends (defaults may be left out). */
export type JobStartBody = z.input<typeof jobStartSchema>;
export type JobStart = z.infer<typeof jobStartSchema>;

/** 201 answer of POST .../pushy/jobs. */
export const jobCreatedSchema = z.object({ id: z.string().min(1), uri: z.string() });
export type JobCreated = z.infer<typeof jobCreatedSchema>;

/** One row of GET .../pushy/jobs, newest first. */
export const jobSummarySchema = z.object({
  id: z.string(),
  command: z.string(),
  status: z.enum(JOB_STATUSES),
  run_timeout: z.number(),
  created_at: httpDateSchema,
  updated_at: httpDateSchema,
});
export type JobSummaryBody = z.infer<typeof jobSummarySchema>;
export const jobListSchema = z.array(jobSummarySchema);

/** GET .../pushy/jobs/ID and the answer of POST .../jobs/ID/abort. */
export const jobSchema = jobSummarySchema.extend({
  /** Per-node status to the sorted names of the nodes in it; statuses with no node are left out. */
  nodes: z.partialRecord(z.enum(NODE_JOB_STATUSES), z.array(z.string())),
  quorum: z.int().nonnegative(),
  capture_output: z.boolean(),
  /** When each node reached its present status. */
  node_updated_at: z.record(z.string(), httpDateSchema),
  env: z.record(z.string(), z.string()).optional(),
  dir: z.string().optional(),
  user: z.string().optional(),
  /** A job in waves: each wave's nodes and outcome, and the current wave. */
  rollout: rolloutViewSchema.optional(),
  /** A job a schedule started: the schedule, and the occurrence it fired for. */
  schedule: z.object({ name: z.string(), occurrence: httpDateSchema }).optional(),
});
export type JobBody = z.infer<typeof jobSchema>;

/** GET .../pushy/node_states[/NODE] (spec 2.5; `availability` also counts a node in rehab as unavailable). */
export const nodeStateSchema = z.object({
  node_name: z.string(),
  status: z.enum(['up', 'down']),
  updated_at: httpDateSchema,
  availability: z.enum(['available', 'unavailable']),
});
export type NodeStateBody = z.infer<typeof nodeStateSchema>;
export const nodeStateListSchema = z.array(nodeStateSchema);

const address = z.string().regex(/^tcp:\/\/.+:\d+$/);

/** GET .../pushy/config/NODE (reference 3): where a node connects, its session key and the timings. */
export const pushConfigSchema = z.object({
  type: z.literal('config'),
  host: z.string(),
  node: z.string(),
  organization: z.string(),
  push_jobs: z.object({
    heartbeat: z.object({
      heartbeat_addr: address,
      command_addr: address,
      /** Seconds. */
      interval: z.number().positive(),
      offline_threshold: z.int().positive(),
      online_threshold: z.int().positive(),
    }),
  }),
  /** Z85, or null when CurveZMQ is off. */
  curve_public_key: z.string().length(40).nullable(),
  /** The 32-byte HMAC key, RSA-OAEP encrypted to the requester's public key, base64. */
  encoded_session_key: z.object({ method: z.literal('hmac_sha256'), key: z.string().min(1) }),
  /** Seconds the session key has left. */
  lifetime: z.number().positive(),
  incarnation_id: z.string().min(1),
  max_message_skew: z.number().positive(),
  max_body_size: z.int().positive(),
  /**
   * The API base URLs (`http://host:port`) of the cluster's live members, each as its nodes should use it (its
   * `api_url`), each once; one process lists its own. A client tries them when the server it asks fails. Older
   * servers send none, and older clients ignore it (the object is not strict).
   */
  server_urls: z.array(z.string()).optional(),
  /**
   * The API base URL of the member the node connects to (its gateway), as listed in `server_urls`: when that member
   * goes silent, a client that asks it moves to another before it fetches its config again.
   */
  gateway_url: z.string().optional(),
});
export type PushConfigBody = z.infer<typeof pushConfigSchema>;
