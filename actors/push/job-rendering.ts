// A job's JSON as its actor keeps it: rendered once per change, and a large job's stored rendering kept a while for
// the GETs that poll it (keptRenderingMs), so that rendering stays a small share of a core however many poll.
import type { JobBody } from '../../src/api/push-jobs.js';
import { jobJson } from '../../src/api/job-view.js';
import { ok, type Reply } from '../shared/reply.js';
import { keptAnswer, keptRenderingMs } from './job-answers.js';
import type { JobState } from './job-model.js';
import type { JobSaver } from './job-saver.js';

export class JobRendering {
  /** A job's nodes are fixed when it is made: their names are sorted once, for every rendering. */
  private readonly names: readonly string[];
  private readonly freshMs: number;
  /** The job rendered once per change: a job polled while 10,000 nodes answer is not rendered for every poll. */
  private rendered: JobBody | undefined;
  private storedAnswer: { version: number; status: JobState['status']; at: number; reply: Reply } | undefined;

  constructor(
    private readonly state: JobState,
    private readonly saver: JobSaver,
    private readonly now: () => number,
  ) {
    this.names = Object.keys(state.nodes).sort();
    this.freshMs = keptRenderingMs(this.names.length);
  }

  /** The job as it is in memory now. */
  body(): JobBody {
    return (this.rendered ??= jobJson(this.state, this.names));
  }

  /** The job changed: the next body is rendered anew. */
  changed(): void {
    this.rendered = undefined;
  }

  /** The job rendered now, not kept: how a finished job answers from then on. */
  final(): JobBody {
    return jobJson(this.state, this.names);
  }

  /**
   * The answer to GET: the job as stored, read between the actor's turns without a message, so a request is not
   * queued behind the answers of thousands of nodes. While the store refuses writes, the job as it is in memory.
   */
  shown(): Reply {
    const { saver } = this;
    if (saver.failing) return ok(this.body());
    const stored = saver.stored;
    const now = this.now();
    const last = this.storedAnswer;
    const current =
      last !== undefined &&
      (last.version === saver.version || (last.status === stored.status && now - last.at < this.freshMs));
    if (current) return last.reply;
    const reply = keptAnswer(jobJson(stored, this.names));
    this.storedAnswer = { version: saver.version, status: stored.status, at: now, reply };
    return reply;
  }
}
