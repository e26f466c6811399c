// What a job actor is told (JobMsg), and what it tells its parent (JobParent): the job actor's two sides, shared by
// the actor (job.ts) and what runs its effects (job-effects.ts).
import type { Ref } from 'nact';
import type { JobBody } from '../../src/api/push-jobs.js';
import type { Reply } from '../shared/reply.js';
import type { JobTimer } from './job-model.js';
import type { JobHeader } from './job-store.js';
import type { NodeAnswerMessage } from './ports.js';

export type JobMsg =
  /**
   * The job starts (or resumes after a restart). `answer`, the new job's POST answer, leaves once the first step
   * is stored: a GET sent after it shows which nodes were asked and which were unavailable.
   */
  | { type: 'begin'; available: ReadonlySet<string>; restored: boolean; answer?: { replyTo: Ref<Reply>; reply: Reply } }
  /**
   * `stored`: told, once the answer is handled, a promise of what it changed being stored, which rejects when the
   * store refuses it (another process owns the job now): a gateway's inbox entry is acknowledged only once stored.
   */
  | { type: 'answer'; node: string; message: NodeAnswerMessage; stored?: (saved: Promise<void>) => void }
  | { type: 'node_down'; node: string }
  | { type: 'node_reached'; node: string }
  | { type: 'timer'; timer: JobTimer; at: number }
  | { type: 'abort'; replyTo: Ref<Reply> }
  /**
   * From the parent once it has forgotten the job: all sent before is answered, and nothing comes after. `replyTo`
   * hears when that is so (a release waits for it before it waits for the job's saves).
   */
  | { type: 'stop'; replyTo?: Ref<true> }
  /** The store lost what it held: the whole job is saved again. */
  | { type: 'write_back' };

export interface JobParent {
  /** The job's row changed (after the change is saved). */
  saved(header: JobHeader): void;
  /** The job is over (`final`: how it answers from now on): the parent forgets it and stops its actor. */
  finished(id: string, final: JobBody): void;
  /** A new job the store refused, or whose organization was deleted while it was stored: it never started. */
  refused(id: string): void;
  /** Whether the organization was deleted (read once a new job is stored, before it starts). */
  deleted(): boolean;
  /** Which of `nodes` are available now (read as a rollout's next wave starts). */
  available(nodes: Iterable<string>): ReadonlySet<string>;
}
