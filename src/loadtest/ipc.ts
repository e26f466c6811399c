// The messages between infra-loadtest and its worker processes. The parent's are checked by zod in the worker;
// a worker's tallies are added up by the parent (tally.ts).
import { z } from 'zod';

const behaviourSchema = z.object({
  vote: z.enum(['ack', 'nack', 'silent']),
  run: z.enum(['succeed', 'fail', 'crash']),
  flap: z.boolean(),
});

export const initSchema = z.object({
  type: z.literal('init'),
  baseUrl: z.string(),
  /** Where nodes fetch their config again after silence: baseUrl, then the cluster's other members (by turns). */
  apiUrls: z.array(z.string()),
  org: z.string(),
  user: z.string(),
  userKeyPem: z.string(),
  clientKeyPem: z.string(),
  clientPublicKeyPem: z.string(),
  /** Each node with its behaviour and its wave in its jobs' rollouts (1 for the first; 0: none). */
  nodes: z.array(z.object({ name: z.string(), behaviour: behaviourSchema, wave: z.int().nonnegative() })),
  apiConcurrency: z.int().positive(),
  nodesPerConnection: z.int().positive(),
  slowVoteMs: z.int().nonnegative(),
  runMs: z.int().nonnegative(),
  lateHeartbeats: z.boolean(),
  /** With --record: the file each node appends its own record to. */
  recordFile: z.string().nullable(),
});
export type WorkerInit = z.infer<typeof initSchema>;

export const parentMessageSchema = z.discriminatedUnion('type', [
  initSchema,
  /** The measured part begins: flapping and late heartbeats start. */
  z.object({ type: z.literal('start') }),
  z.object({ type: z.literal('stop'), cleanup: z.boolean() }),
]);
export type ParentMessage = z.infer<typeof parentMessageSchema>;

/** What the nodes of one worker saw of one job since the last batch. */
export interface JobTally {
  commits: number;
  firstCommitAt: number;
  lastCommitAt: number;
  acks: number;
  nacks: number;
  lastAckAt: number;
  runs: number;
  firstRunAt: number;
  lastRunAt: number;
  succeeded: number;
  failed: number;
  crashed: number;
  lastResultAt: number;
  /** In a rollout, what the nodes of each wave saw of it, by wave (1 for the first). */
  waves: Record<number, WaveTally>;
}

/** What the nodes of one wave of a job's rollout saw of it. */
export interface WaveTally {
  firstCommitAt: number;
  /** `run` orders received. */
  runs: number;
  /** Results sent, succeeded or failed: a node that crashes sends none, and the server ends its run later. */
  reported: number;
  lastResultAt: number;
}

export interface Batch {
  type: 'batch';
  jobs: Record<string, JobTally>;
  heartbeatsSent: number;
  /** Job answers (votes, run answers, results, aborted) sent. */
  answersSent: number;
  serverHeartbeats: number;
  /** Nodes that had their first server heartbeat: the server has heard them since they started. */
  nodesHeard: number;
  drops: Record<string, number>;
  /** Nodes the server refused as held by another process, and the latest moment it named for letting go. */
  held: number;
  heldUntil: number;
  errors: string[];
  /**
   * A flapping node fell silent (`at`: its last heartbeat; `due`: when its offline window runs out) or spoke
   * again (`due` 0).
   */
  flaps: Array<{ node: string; kind: 'stop' | 'resume'; at: number; due: number }>;
  crashes: Array<{ node: string; kind: 'crash' | 'restart'; at: number }>;
  /** Configs fetched again after the server fell silent, by what came of it (see follow.ts). */
  refetches: Refetches;
  /**
   * The worker's worst event-loop delay since its last batch (ms), once its nodes heartbeat: its nodes' heartbeats
   * and answers were late by as much, which the server cannot tell from nodes that went quiet.
   */
  lagMaxMs: number;
}

/** `moved`: the config named other channels (or a new key) and the node went there; `same`: nothing changed. */
export interface Refetches {
  moved: number;
  same: number;
  failed: number;
}

export type WorkerMessage =
  | { type: 'provisioned'; done: number; reused: number }
  /** Nodes connected so far, while they connect in waves. */
  | { type: 'connecting'; nodes: number }
  | { type: 'connected'; nodes: number }
  | Batch
  | { type: 'failed'; message: string }
  | { type: 'stopped'; deleted: number };
