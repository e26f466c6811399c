// The job and organization event feeds (reference 6.5): the events a job's actor publishes, as the server sends
// them in `text/event-stream` and as the cli and the dashboard read them. One zod schema per event's data; every
// event's data also carries `timestamp` (`YYYY-MM-DD HH:MM:SS.uuuuuuZ`).
import { z } from 'zod';
import type { NodeJobStatus } from '../push/job-states.js';
import { WAVE_STATUSES, type WaveStatus } from './rollout.js';

/** `quorum_vote` statuses; `lost_availibility` is spelt as the original server spells it on the wire. */
export const VOTE_STATUSES = [
  'success',
  'failure',
  'unexpected_commit',
  'client_died_while_voting',
  'lost_availibility',
  'down',
  'voting_timeout',
] as const;
export type VoteStatus = (typeof VOTE_STATUSES)[number];

/** `run_complete` statuses; `aborted` (a node that stopped its command when told to) is ours. */
export const RUN_STATUSES = [
  'success',
  'failure',
  'aborted',
  'crashed',
  'client_died_while_running',
  'run_nacked',
  'run_nacked_while_running',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

// A node's status after each feed status that tells it (actors/push/job-tables.ts). The others (a vote from a
// node the job has let go, `down` from a node that had finished) may leave it as it was.
export const NODE_STATUS_AFTER_VOTE = {
  success: 'ready',
  failure: 'nacked',
  lost_availibility: 'unavailable',
  voting_timeout: 'unavailable',
} as const satisfies Partial<Record<VoteStatus, NodeJobStatus>>;
export const NODE_STATUS_AFTER_RUN = {
  success: 'succeeded',
  failure: 'failed',
  aborted: 'aborted',
  crashed: 'crashed',
  run_nacked: 'crashed',
  run_nacked_while_running: 'crashed',
} as const satisfies Partial<Record<RunStatus, NodeJobStatus>>;

const node = z.string();
const startData = z.object({
  command: z.string(),
  run_timeout: z.number(),
  quorum: z.number(),
  node_count: z.number(),
  /** The requestor's name. */
  user: z.string().optional(),
  /** The user the nodes run the command as. */
  job_user: z.string().optional(),
  dir: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  file_specified: z.literal(true).optional(),
  capture: z.boolean().optional(),
});

/** What a job's machine says happened, before the feed numbers and timestamps it. */
export type JobNote =
  | { event: 'start'; data: z.infer<typeof startData> }
  | { event: 'quorum_vote'; data: { node: string; status: VoteStatus } }
  | { event: 'quorum_succeeded'; data: Record<string, never> }
  | { event: 'run_start'; data: { node: string } }
  | { event: 'run_complete'; data: { node: string; status: RunStatus } }
  | { event: 'rehab'; data: { node: string } }
  | { event: 'job_complete'; data: { status: string } }
  /** A rollout's wave is asked to vote (`wave`: 1 for the first; `nodes`: how many it takes). */
  | { event: 'wave_start'; data: { wave: number; nodes: number; quorum: number } }
  /** A rollout's wave ended; `failures`: of every node that ran so far. */
  | { event: 'wave_end'; data: { wave: number; status: WaveStatus; failures: number } };
export type JobNoteName = JobNote['event'];

const stamped = <T extends z.ZodRawShape>(shape: T) => z.looseObject({ ...shape, timestamp: z.string() });

/** The data of each event a reader may meet, by event name. */
export const FEED_EVENT_DATA = {
  start: stamped({ ...startData.shape, job: z.string().optional() }),
  quorum_vote: stamped({ node, status: z.enum(VOTE_STATUSES) }),
  quorum_succeeded: stamped({}),
  run_start: stamped({ node }),
  run_complete: stamped({ node, status: z.enum(RUN_STATUSES) }),
  rehab: stamped({ node }),
  job_complete: stamped({ status: z.string(), job: z.string().optional() }),
  wave_start: stamped({ wave: z.number(), nodes: z.number(), quorum: z.number(), job: z.string().optional() }),
  wave_end: stamped({
    wave: z.number(),
    status: z.enum(WAVE_STATUSES),
    failures: z.number(),
    job: z.string().optional(),
  }),
  /** The job's actor is gone: its whole record, as GET answers it. */
  summary: z.looseObject({ id: z.string(), status: z.string(), nodes: z.record(z.string(), z.array(z.string())) }),
  /** The org feed's readers asked for more than it keeps. */
  start_of_history: stamped({}),
} as const;
export type FeedEventName = keyof typeof FEED_EVENT_DATA;

export function isFeedEventName(name: string): name is FeedEventName {
  return Object.hasOwn(FEED_EVENT_DATA, name);
}

let lastFeedMs = Number.NaN;
let lastFeedTimestamp = '';

/** `2026-11-24 10:35:19.123000Z`: the feed's timestamp, in UTC with microseconds (reference 6.5). */
export function feedTimestamp(ms: number): string {
  // The events of a burst share their millisecond: the last one's text is kept.
  if (ms !== lastFeedMs) {
    const iso = new Date(ms).toISOString(); // 2026-11-24T10:35:19.123Z
    lastFeedMs = ms;
    lastFeedTimestamp = `${iso.slice(0, 10)} ${iso.slice(11, 23)}000Z`;
  }
  return lastFeedTimestamp;
}
