// The push-jobs requests an organization hands its push supervisor once it has authorized and checked them (spec
// 2.4-2.6, 4.1): the supervisor, which holds the jobs, the node states and the job list, answers each itself.
import type { Reply } from '../shared/reply.js';
import type { JobState } from './job-model.js';
import type { ScheduleRequest } from './schedules.js';

export type PushRequest =
  /** A new job: its actor stores it, starts it, then sends `reply`. */
  | { type: 'start_job'; job: JobState; reply: Reply }
  | { type: 'list_jobs'; offset: number; limit: number }
  /** The job's actor answers, or its stored record once the job is over. */
  | { type: 'job'; id: string; request: 'get' | 'abort' }
  /** The captured output in the store answers. */
  | { type: 'job_output'; id: string; node: string; channel: 'stdout' | 'stderr' }
  /**
   * `nodes`: the organization's node objects, shown `down` since `since` (its creation) until first heard (spec
   * 2.5); `heartbeats`: each row also says when the node's last heartbeat arrived (the dashboard's node grid).
   */
  | { type: 'node_states'; nodes: readonly string[]; since: number; heartbeats: boolean }
  /** `known`: the organization has the node object. */
  | { type: 'node_state'; node: string; known: boolean; since: number }
  /** The node's config, with a session key only the requester can read; `ccpk` is bound to the session. */
  | { type: 'node_config'; node: string; ccpk?: string }
  /** Schedules: created, listed, shown, deleted, paused, resumed (schedules.ts answers them). */
  | ScheduleRequest;

/** A request about schedules, which the supervisor's schedules answer. */
export function isScheduleRequest(request: PushRequest): request is ScheduleRequest {
  return request.type === 'schedule_create' || request.type === 'schedules' || request.type === 'schedule';
}

/** A request that changes nothing: the organization may hand it on while its own writes are being stored. */
export function isPushRead(request: PushRequest): boolean {
  if (request.type === 'schedule') return request.request === 'get';
  return (
    request.type !== 'start_job' &&
    request.type !== 'schedule_create' &&
    !(request.type === 'job' && request.request === 'abort')
  );
}
