// What a pure handler of an organization's op decides: the answer, the writes that must be stored before it,
// and what the organization actor does next, in order, once the writes are applied.
import { isPushRead, type PushRequest } from '../push/push-requests.js';
import type { Reply, RequestContext } from '../shared/reply.js';
import type { OrgWrite } from './org-state.js';

export type OrgEffect =
  /** Tells the users actor that a user joined or left the organization. */
  | { type: 'associate'; username: string; member: boolean }
  /** The organization document is gone: drop the rest of its data and its actors. */
  | { type: 'drop_org' }
  /** The users actor answers with the user's JSON (hop 2); `readBy`: only if that requester may read it. */
  | { type: 'answer_with_user'; name: string; readBy?: RequestContext }
  /** The organization's push supervisor answers (a job start: the job's actor, once the job is stored). */
  | { type: 'push'; request: PushRequest };

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
      return true;
    case 'push':
      return isPushRead(effect.request);
    case 'associate':
    case 'drop_org':
      return false;
  }
}
