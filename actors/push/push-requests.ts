// What reaches an organization's push supervisor: the push-jobs requests its organization hands it once it has
// authorized and checked them (spec 2.4-2.6, 4.1), which the supervisor, holding the jobs, the node states and the
// job list, answers itself; and what its children and timers report.
import type { Reply } from '../shared/reply.js';
import type { JobBody } from '../../src/api/push-jobs.js';
import type { GatewayReport } from '../../src/cluster/node-link-messages.js';
import type { JobState } from './job-model.js';
import type { JobHeader } from './job-store.js';
import type { AvailabilityChange } from './node.js';
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

/** What the push supervisor takes from its children and timers, besides its organization's requests. */
export type PushReport =
  | { type: 'node_availability'; node: string; change: AvailabilityChange }
  | { type: 'job_saved'; header: JobHeader }
  | { type: 'job_finished'; id: string; final: JobBody }
  | { type: 'job_retired'; id: string }
  | { type: 'push_tick' }
  /** What a gateway (another process) heard from nodes of this organization; `stored` is told when it is stored. */
  | {
      type: 'gateway_events';
      gateway: string;
      events: readonly GatewayReport[];
      stored: (saved: Promise<void>) => void;
    }
  /** Members of the cluster left: nodes connected to them are watched here until they connect elsewhere. */
  | { type: 'gateways_gone'; gateways: ReadonlySet<string> }
  /** A schedule's timer fired, or the store answered one of its writes (schedules.ts runs the rest in this turn). */
  | { type: 'schedule_turn'; run: () => void };
