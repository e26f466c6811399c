// A schedule's life as a pure step, (state, event) -> (state, effects): what its stored record says, and what a
// moment of its clock does to it. `handled_through` is the heart of it: every occurrence up to that time has been
// fired, skipped or counted missed, and is never looked at again, so a step taken twice (a takeover reading the
// record its last owner wrote) fires nothing twice.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { scheduleCreateSchema } from '../../src/api/schedules.js';
import { nextOccurrence, occurrencesBetween } from '../../src/push/cron.js';

const epochMs = z.number().int().nonnegative();

/** What the store holds of a schedule (the organization's `schedules` collection, by name): what it was made with, and
 * how it has gone. Not strict, as every stored document: a field a later version adds is left alone. */
export const scheduleStateSchema = z.object({
  ...scheduleCreateSchema.shape,
  /** Made when the schedule is: its jobs' ids derive from it, so a schedule made again under the same name differs. */
  uid: z.string(),
  paused: z.boolean(),
  requestor: z.string(),
  created_at: epochMs,
  updated_at: epochMs,
  handled_through: epochMs,
  /** The latest jobs it started, newest first. */
  jobs: z.array(z.object({ id: z.string(), occurrence: epochMs })),
  skipped_overlap: z.int().nonnegative(),
  missed: z.int().nonnegative(),
});
export type ScheduleState = z.infer<typeof scheduleStateSchema>;

export type ScheduleEvent =
  /**
   * The schedule's clock at `at` (its timer, armed for an occurrence, or a restart or takeover reading it): every
   * occurrence since `handled_through` is handled. `running`: whether its latest job still runs; `catchupMs`: how
   * late an occurrence may still fire (schedule_catchup).
   */
  | { type: 'tick'; at: number; running: boolean; catchupMs: number }
  | { type: 'pause'; at: number }
  /** Occurrences while it was paused are not fired: it goes on from `at`. */
  | { type: 'resume'; at: number };

export type ScheduleEffect =
  /** Store the record; what follows waits until it is stored. */
  | { type: 'save' }
  /** Start the job of `occurrence`, with id `id`. */
  | { type: 'start_job'; id: string; occurrence: number }
  /** Wake the schedule at `at` (its next occurrence); a schedule paused or that never fires again arms nothing. */
  | { type: 'arm'; at: number }
  | { type: 'disarm' }
  /** What the tick did with the occurrences it handled, for the metrics. */
  | { type: 'tally'; fired: number; skipped_overlap: number; missed: number };

/** The id of the job a schedule starts for an occurrence: the same on every process, so it is started once. */
export function occurrenceJobId(s: Pick<ScheduleState, 'uid'>, occurrence: number): string {
  return createHash('sha256').update(`${s.uid}\u0000${occurrence}`).digest('hex').slice(0, 32);
}

export function stepSchedule(s: ScheduleState, e: ScheduleEvent): { state: ScheduleState; effects: ScheduleEffect[] } {
  switch (e.type) {
    case 'pause':
      if (s.paused) return { state: s, effects: [] };
      return { state: { ...s, paused: true, updated_at: e.at }, effects: [{ type: 'save' }, { type: 'disarm' }] };
    case 'resume': {
      if (!s.paused) return { state: s, effects: [] };
      const state = { ...s, paused: false, updated_at: e.at, handled_through: Math.max(s.handled_through, e.at) };
      return { state, effects: [{ type: 'save' }, ...armNext(state)] };
    }
    case 'tick':
      return tick(s, e);
  }
}

/**
 * Every occurrence since the last handled one, up to now: the latest fires if it is no later than `catchupMs` (and,
 * under prohibit_overlap, no job of the schedule still runs: it is skipped then); the earlier ones were missed.
 */
function tick(s: ScheduleState, e: Extract<ScheduleEvent, { type: 'tick' }>): ReturnType<typeof stepSchedule> {
  if (s.paused) return { state: s, effects: [] };
  const { count, latest } = occurrencesBetween(s.cron, s.time_zone, s.handled_through, e.at);
  if (latest === null) return { state: s, effects: armNext(s) };
  const late = e.at - latest > e.catchupMs;
  const skip = !late && s.prohibit_overlap && e.running;
  const fire = !late && !skip;
  const id = occurrenceJobId(s, latest);
  const state: ScheduleState = {
    ...s,
    handled_through: latest,
    updated_at: e.at,
    jobs: fire ? [{ id, occurrence: latest }, ...s.jobs].slice(0, s.keep_jobs) : s.jobs,
    skipped_overlap: s.skipped_overlap + (skip ? 1 : 0),
    missed: s.missed + count - (late ? 0 : 1),
  };
  const tally = {
    type: 'tally',
    fired: fire ? 1 : 0,
    skipped_overlap: skip ? 1 : 0,
    missed: state.missed - s.missed,
  };
  return {
    state,
    effects: [
      { type: 'save' },
      ...(fire ? [{ type: 'start_job', id, occurrence: latest } as const] : []),
      tally as ScheduleEffect,
      ...armNext(state),
    ],
  };
}

function armNext(s: ScheduleState): ScheduleEffect[] {
  if (s.paused) return [];
  const next = nextOccurrence(s.cron, s.time_zone, s.handled_through);
  return next === null ? [{ type: 'disarm' }] : [{ type: 'arm', at: next }];
}

/** When the schedule fires next, as GET shows it: null while paused or once it never will. */
export function nextRunAt(s: ScheduleState, now: number): number | null {
  return s.paused ? null : nextOccurrence(s.cron, s.time_zone, Math.max(s.handled_through, now - 1));
}
