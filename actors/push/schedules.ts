// An organization's schedules, run by its push supervisor (push-runtime.ts) in the process that owns the
// organization: each schedule's next occurrence armed on the push timers, each step of schedule-machine.ts stored
// before its job starts. The store fences every write with this process's lease on the organization's partition,
// so only the owner records a firing; the record names the occurrence's job by an id every process derives alike,
// and a new owner that finds a firing recorded without its job starts that job, once.
import { dispatch, type Ref } from 'nact';
import { httpDate } from '../../src/lib/dates.js';
import { schedulesCollection } from '../../src/store/collections.js';
import type { ScheduleBody } from '../../src/api/schedules.js';
import { fail, ok, storeFailure, type Reply } from '../shared/reply.js';
import type { JobState } from './job-model.js';
import { jobFromRequest, requestOf } from './job-request.js';
import type { PushPorts } from './ports.js';
import {
  nextRunAt,
  stepSchedule,
  type ScheduleEffect,
  type ScheduleEvent,
  type ScheduleState,
} from './schedule-machine.js';

/** A firing whose record could not be stored is tried again this soon, while its occurrence may still fire. */
const SAVE_RETRY_MS = 1000;

export type ScheduleRequest =
  | { type: 'schedule_create'; schedule: ScheduleState }
  | { type: 'schedules' }
  | { type: 'schedule'; name: string; request: 'get' | 'delete' | 'pause' | 'resume' };

/** What the schedules need of their push supervisor. */
export interface ScheduleHost {
  /** Whether the job runs here now. */
  running(id: string): boolean;
  /** Whether the job is stored (running here, or its record read). */
  known(id: string): boolean;
  /** Starts a new job (its actor stores it first). */
  start(job: JobState): void;
  /**
   * Runs `run` in a turn of the supervisor of its own: a timer that fired, or a store's answer. A supervisor let go or
   * stopped (its server stopping) runs nothing more.
   */
  turn(run: () => void): void;
}

export class Schedules {
  private readonly armed = new Map<string, () => void>();
  /** Schedules whose last step is being stored: their next tick waits for it. */
  private readonly saving = new Set<string>();
  private stopped = false;

  constructor(
    private readonly org: string,
    private readonly all: Map<string, ScheduleState>,
    private readonly ports: PushPorts,
    private readonly host: ScheduleHost,
    /** schedule_catchup, in ms. */
    private readonly catchupMs: number,
  ) {}

  /**
   * The organization is served here from now on (a start, or a takeover): a firing recorded without its job gets its
   * job, then every schedule handles what passed while no process served it.
   */
  resume(): void {
    const now = this.ports.now();
    for (const s of this.all.values()) {
      const last = s.jobs[0];
      if (
        last &&
        last.occurrence === s.handled_through &&
        !this.host.known(last.id) &&
        now - last.occurrence <= this.catchupMs
      )
        this.startJob(s, last.id, last.occurrence);
      this.tick(s.name);
    }
  }

  tick(name: string): void {
    const s = this.all.get(name);
    if (!s || this.stopped) return;
    if (this.saving.has(name)) return this.arm(name, this.ports.now() + SAVE_RETRY_MS);
    const last = s.jobs[0];
    this.step(s, {
      type: 'tick',
      at: this.ports.now(),
      running: last !== undefined && this.host.running(last.id),
      catchupMs: this.catchupMs,
    });
  }

  request(request: ScheduleRequest, replyTo: Ref<Reply>): void {
    const answer = (reply: Reply) => dispatch(replyTo, reply);
    if (request.type === 'schedules') {
      const now = this.ports.now();
      answer(ok([...this.all.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map((s) => scheduleView(s, now))));
      return;
    }
    if (request.type === 'schedule_create') {
      const s = request.schedule;
      if (this.all.has(s.name)) return answer(fail(409, `Schedule '${s.name}' already exists`));
      this.all.set(s.name, s);
      this.save(
        s,
        () => {
          this.arm(s.name, this.ports.now());
          answer(ok(scheduleView(s, this.ports.now()), 201));
        },
        () => this.all.delete(s.name),
        answer,
      );
      return;
    }
    const s = this.all.get(request.name);
    if (!s) return answer(fail(404, `Cannot find a schedule named ${request.name}`));
    if (request.request === 'get') return answer(ok(scheduleView(s, this.ports.now())));
    if (request.request === 'delete') {
      this.disarm(s.name);
      this.all.delete(s.name);
      this.ports.store.remove(schedulesCollection(this.org), s.name).then(
        () => answer(ok(scheduleView(s, this.ports.now()))),
        (error: unknown) =>
          this.host.turn(() => {
            this.all.set(s.name, s);
            this.tick(s.name);
            answer(storeFailure(this.logOf(s), error));
          }),
      );
      return;
    }
    this.step(s, { type: request.request, at: this.ports.now() }, answer);
  }

  /** The organization is let go here, or deleted: nothing fires from now on. */
  stop(): void {
    this.stopped = true;
    for (const name of [...this.armed.keys()]) this.disarm(name);
  }

  private step(before: ScheduleState, event: ScheduleEvent, answer?: (reply: Reply) => void): void {
    const { state, effects } = stepSchedule(before, event);
    if (effects.length === 0) {
      answer?.(ok(scheduleView(state, this.ports.now())));
      return;
    }
    this.all.set(state.name, state);
    const after = () => {
      for (const e of effects) this.run(state, e);
      answer?.(ok(scheduleView(state, this.ports.now())));
    };
    if (!effects.some((e) => e.type === 'save')) return after();
    this.save(
      state,
      after,
      () => {
        // Not stored: as if the step never was. A firing is tried again while its occurrence may still fire.
        if (this.all.get(state.name) === state) this.all.set(state.name, before);
        this.arm(state.name, this.ports.now() + SAVE_RETRY_MS);
      },
      answer,
    );
  }

  private run(s: ScheduleState, e: ScheduleEffect): void {
    switch (e.type) {
      case 'start_job':
        this.startJob(s, e.id, e.occurrence);
        break;
      case 'arm':
        this.arm(s.name, e.at);
        break;
      case 'disarm':
        this.disarm(s.name);
        break;
      case 'tally':
        if (e.fired > 0) this.ports.counters.inc('schedule_firings', 'fired', e.fired);
        if (e.skipped_overlap > 0) this.ports.counters.inc('schedule_firings', 'skipped_overlap', e.skipped_overlap);
        if (e.missed > 0) this.ports.counters.inc('schedule_firings', 'missed', e.missed);
        break;
      case 'save':
        break; // done before the others ran
    }
  }

  /** Stores the record; `done` once it is, `undone` if the store refused it (another process owns it, or Redis is away). */
  private save(s: ScheduleState, done: () => void, undone: () => void, answer?: (reply: Reply) => void): void {
    this.saving.add(s.name);
    this.ports.store.put(schedulesCollection(this.org), s.name, s).then(
      () =>
        this.host.turn(() => {
          this.saving.delete(s.name);
          done();
        }),
      (error: unknown) =>
        this.host.turn(() => {
          this.saving.delete(s.name);
          const refused = storeFailure(this.logOf(s), error);
          undone();
          answer?.(refused);
        }),
    );
  }

  private logOf(s: ScheduleState) {
    return this.ports.log.child({ org: this.org, schedule: s.name });
  }

  private startJob(s: ScheduleState, id: string, occurrence: number): void {
    if (this.stopped) return; // the organization is let go: its next owner starts the job the record names
    const made = jobFromRequest(requestOf(s.job), {
      id,
      requestor: s.requestor,
      at: this.ports.now(),
      votingLimit: this.ports.settings.voting_timeout,
    });
    if ('error' in made) {
      this.ports.log.error('a schedule could not start its job', {
        org: this.org,
        schedule: s.name,
        error: made.error,
      });
      return;
    }
    made.job.schedule = { name: s.name, occurrence };
    this.host.start(made.job);
  }

  private arm(name: string, at: number): void {
    this.disarm(name);
    if (this.stopped) return;
    const wait = Math.min(Math.max(0, at - this.ports.now()), 2_147_483_647);
    this.armed.set(
      name,
      this.ports.timers.after(wait, () => this.host.turn(() => this.tick(name)), { unref: true }),
    );
  }

  private disarm(name: string): void {
    this.armed.get(name)?.();
    this.armed.delete(name);
  }
}

/** GET .../pushy/schedules/NAME. */
export function scheduleView(s: ScheduleState, now: number): ScheduleBody {
  const next = nextRunAt(s, now);
  return {
    name: s.name,
    job: s.job,
    cron: s.cron,
    time_zone: s.time_zone,
    prohibit_overlap: s.prohibit_overlap,
    keep_jobs: s.keep_jobs,
    paused: s.paused,
    requestor: s.requestor,
    created_at: httpDate(s.created_at),
    updated_at: httpDate(s.updated_at),
    next_run_at: next === null ? null : httpDate(next),
    jobs: s.jobs.map((j) => ({ id: j.id, occurrence: httpDate(j.occurrence) })),
    skipped_overlap: s.skipped_overlap,
    missed: s.missed,
  };
}
