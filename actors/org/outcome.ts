// What a pure handler of an organization's op decides: the answer, the writes that must be stored before it,
// and what the organization actor does next, in order, once the writes are applied.
import type { NodeStateBody } from '../../src/api/push-jobs.js';
import type { JobState } from '../push/job-model.js';
import type { Reply, RequestContext } from '../shared/reply.js';
import type { OrgWrite } from './org-state.js';

export type OrgEffect =
  /** Tells the users actor that a user joined or left the organization. */
  | { type: 'associate'; username: string; member: boolean }
  /** The organization document is gone: drop the rest of its data and its actors. */
  | { type: 'drop_org' }
  /** Saves the new job and starts its actor, then `reply` is sent. */
  | { type: 'start_job'; job: JobState }
  /** The users actor answers with the user's JSON (hop 2); `readBy`: only if that requester may read it. */
  | { type: 'answer_with_user'; name: string; readBy?: RequestContext }
  /** The job's actor answers, or its stored record once the job is over. */
  | { type: 'answer_from_job'; id: string; request: 'get' | 'abort' }
  /** The captured output in the store answers. */
  | { type: 'answer_with_output'; id: string; node: string; channel: 'stdout' | 'stderr' }
  /** The node's config, with a session key only the requester can read, answers; `ccpk` is bound to the session. */
  | { type: 'answer_with_config'; node: string; ccpk?: string }
  /** These node states answer, each with `last_heartbeat` (an HTTP date, or null) from its node follower. */
  | { type: 'answer_with_heartbeats'; rows: NodeStateBody[] };

export interface OrgOutcome {
  /** The answer, unless an `answer_*` effect hands the request on. */
  reply: Reply;
  writes?: OrgWrite[];
  effects?: OrgEffect[];
}

/** What handlers know besides the state: the time, and what a job start is checked against. */
export interface HandlerEnv {
  now: number;
  push: {
    voting_timeout: number;
    /** A commit message larger than this never reaches a node. */
    max_body_size: number;
    incarnation_id: string;
    /** Whether the channels use CurveZMQ: a config request must then name the requester's Curve key. */
    curve: boolean;
  };
}

/** An outcome that writes nothing and only hands the request to readers. */
export function isRead(out: OrgOutcome): boolean {
  return (out.writes ?? []).length === 0 && (out.effects ?? []).every(onlyReads);
}

function onlyReads(effect: OrgEffect): boolean {
  switch (effect.type) {
    case 'answer_with_user':
    case 'answer_with_output':
    case 'answer_with_config':
    case 'answer_with_heartbeats':
      return true;
    case 'answer_from_job':
      return effect.request === 'get';
    case 'associate':
    case 'drop_org':
    case 'start_job':
      return false;
  }
}
