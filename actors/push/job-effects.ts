// What a job actor does with its machine's effects, in order: each change is saved before any message, timer, feed
// note or answer makes it visible (the saver holds those back until their write is done).
import { dispatch, type Ref } from 'nact';
import type { JobMsg, JobParent } from './job-messages.js';
import type { JobEffect, JobState, JobTimer } from './job-model.js';
import type { JobRendering } from './job-rendering.js';
import type { JobSaver } from './job-saver.js';
import { headerOf } from './job-store.js';
import type { NodeAnswerMessage, PushPorts } from './ports.js';

/** setTimeout takes at most 2^31-1 ms; longer deadlines are reached in several waits. */
const MAX_TIMER_MS = 2_147_483_647;

/** The node's answer an event was made from, for the effects that carry part of it on (its output). */
export type AnswerCause = NodeAnswerMessage & { node: string };

export class JobEffects {
  constructor(
    private readonly org: string,
    private readonly ports: PushPorts,
    private readonly saver: JobSaver,
    private readonly rendering: JobRendering,
    private readonly owner: JobParent,
    private readonly self: () => Ref<JobMsg>,
  ) {}

  run(state: JobState, effects: readonly JobEffect[], answer: AnswerCause | undefined): void {
    const { saver, ports, org, owner } = this;
    for (const e of effects) {
      switch (e.type) {
        case 'save_output':
          if (answer?.node === e.node) {
            const { stdout = '', stderr = '', truncated = false } = answer;
            saver.output(e.node, { stdout, stderr, truncated });
          }
          break;
        case 'persist': {
          this.rendering.changed();
          saver.changed(e.job, e.nodes);
          if (e.job) {
            const header = headerOf(state);
            saver.afterSaved(() => owner.saved(header));
          }
          break;
        }
        case 'send':
          saver.afterSaved(() => this.send(e));
          break;
        case 'arm':
          saver.afterSaved(() => this.arm(e.timer, e.at));
          break;
        case 'feed':
          saver.afterSaved(() => ports.feeds.publish(org, state.id, e.notes, e.at));
          break;
        case 'finished': {
          const final = this.rendering.final();
          saver.afterSaved(() => owner.finished(state.id, final));
          break;
        }
        case 'ignored':
          ports.counters.inc('job_ignored', e.reason);
          ports.log.debug('job event ignored', { org, job: state.id, reason: e.reason, event: e.event, node: e.node });
          break;
        case 'rejected':
          break; // the abort request it answers is refused by the caller
      }
    }
  }

  private send(e: Extract<JobEffect, { type: 'send' }>): void {
    const { transport } = this.ports;
    if (e.message === 'commit') {
      const { job_id, command, run_timeout, options, vote_by } = e;
      const commit = { type: 'commit' as const, job_id, command, run_timeout, ...options };
      for (const node of e.nodes) transport.send(this.org, node, commit, vote_by);
    } else {
      const message = { type: e.message, job_id: e.job_id };
      for (const node of e.nodes) transport.send(this.org, node, message);
    }
  }

  /** Unref'd: a pending deadline must not keep a stopped server's process alive; live sockets do that. */
  private arm(timer: JobTimer, at: number): void {
    const { timers, now } = this.ports;
    const wait = at - now();
    if (wait > MAX_TIMER_MS) timers.after(MAX_TIMER_MS, () => this.arm(timer, at), { unref: true });
    else timers.after(Math.max(0, wait), () => dispatch(this.self(), { type: 'timer', timer, at }), { unref: true });
  }
}
