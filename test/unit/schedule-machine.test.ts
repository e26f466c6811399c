// Schedules as a pure step over their own clock: the occurrence that fires, the ones missed while nobody served
// the organization, prohibit_overlap, pause and resume, and the cron expression and time zone as croner reads them.
import t from 'tap';
import {
  nextRunAt,
  occurrenceJobId,
  stepSchedule,
  type ScheduleEffect,
  type ScheduleState,
} from '../../actors/push/schedule-machine.js';
import { jobStartSchema } from '../../src/api/push-jobs.js';
import { cronProblem, nextOccurrence, occurrencesBetween } from '../../src/push/cron.js';

const T0 = Date.UTC(2026, 11, 2, 9, 0, 0); // a Wednesday, on the minute
const MIN = 60_000;
const CATCHUP = 300_000;

function schedule(over: Partial<ScheduleState> = {}): ScheduleState {
  return {
    name: 'nightly',
    uid: 'u1',
    job: jobStartSchema.parse({ command: 'chef-client', nodes: ['a', 'b'] }),
    cron: '* * * * *',
    time_zone: 'UTC',
    prohibit_overlap: true,
    keep_jobs: 3,
    paused: false,
    requestor: 'olga',
    created_at: T0 + 5000,
    updated_at: T0 + 5000,
    handled_through: T0 + 5000,
    jobs: [],
    skipped_overlap: 0,
    missed: 0,
    ...over,
  };
}

const kinds = (effects: ScheduleEffect[]) =>
  effects.map((e) =>
    e.type === 'arm'
      ? `arm +${(e.at - T0) / 1000}s`
      : e.type === 'start_job'
        ? `start ${(e.occurrence - T0) / 1000}s`
        : e.type,
  );
const tick = (s: ScheduleState, at: number, running = false) =>
  stepSchedule(s, { type: 'tick', at, running, catchupMs: CATCHUP });

t.test('cron expressions and time zones, as croner reads them', async (t) => {
  t.equal(nextOccurrence('* * * * *', 'UTC', T0), T0 + MIN, 'strictly after');
  t.equal(nextOccurrence('*/10 * * * * *', 'UTC', T0 + 1), T0 + 10_000, 'six fields: seconds first');
  t.equal(
    nextOccurrence('0 10 * * *', 'Europe/Paris', T0),
    Date.UTC(2026, 11, 3, 9, 0, 0),
    '10:00 in Paris is 09:00 UTC in winter, and today it has passed',
  );
  t.same(occurrencesBetween('* * * * *', 'UTC', T0, T0 + 3 * MIN + 1), { count: 3, latest: T0 + 3 * MIN });
  t.same(occurrencesBetween('* * * * *', 'UTC', T0, T0 + 59_000), { count: 0, latest: null });
  t.equal(
    occurrencesBetween('* * * * * *', 'UTC', T0, T0 + 86_400_000, 100).count,
    100,
    'the count stops at its limit',
  );
  t.equal(cronProblem('0 3 * * 1-5', 'America/New_York', T0), null);
  t.equal(cronProblem('0 0 30 2 *', 'UTC', T0), "Field 'cron' invalid: '0 0 30 2 *' never fires");
  t.match(cronProblem('61 * * * *', 'UTC', T0), /^Field 'cron' invalid: .*minute/);
  t.match(cronProblem('every day', 'UTC', T0), /^Field 'cron' invalid: /);
  t.equal(cronProblem('* * * * *', 'Mars/Olympus', T0), "Field 'time_zone' invalid: unknown time zone 'Mars/Olympus'");
});

t.test('a tick at an occurrence fires it: the record first, then the job, then the next occurrence', async (t) => {
  const s = schedule();
  const { state, effects } = tick(s, T0 + MIN + 3);
  t.same(kinds(effects), ['save', 'start 60s', 'tally', 'arm +120s']);
  const id = occurrenceJobId(s, T0 + MIN);
  t.match(id, /^[0-9a-f]{32}$/);
  t.same(state.jobs, [{ id, occurrence: T0 + MIN }]);
  t.equal(state.handled_through, T0 + MIN);
  t.same(
    tick(state, T0 + MIN + 500).effects.map((e) => e.type),
    ['arm'],
    'the same occurrence again fires nothing',
  );
  t.not(occurrenceJobId({ uid: 'u2' }, T0 + MIN), id, 'a schedule made again under the name starts other jobs');
});

t.test('a schedule that finds its latest job running skips the firing under prohibit_overlap', async (t) => {
  const s = schedule({ jobs: [{ id: 'j0', occurrence: T0 }] });
  const skipped = tick(s, T0 + MIN, true);
  t.same(kinds(skipped.effects), ['save', 'tally', 'arm +120s']);
  t.equal(skipped.state.skipped_overlap, 1);
  t.same(skipped.state.jobs, s.jobs, 'no job recorded');
  const overlapping = tick(schedule({ prohibit_overlap: false }), T0 + MIN, true);
  t.same(kinds(overlapping.effects), ['save', 'start 60s', 'tally', 'arm +120s'], 'without it, the job starts');
});

t.test('after a gap only the latest occurrence fires, within schedule_catchup; the others are missed', async (t) => {
  // Nobody served the organization from 09:00:05 to 09:03:30: three occurrences passed.
  const { state, effects } = tick(schedule(), T0 + 3 * MIN + 30_000);
  t.same(kinds(effects), ['save', 'start 180s', 'tally', 'arm +240s']);
  t.equal(state.missed, 2);
  t.same(
    effects.find((e) => e.type === 'tally'),
    { type: 'tally', fired: 1, skipped_overlap: 0, missed: 2 },
  );
  const late = tick(schedule({ cron: '0 * * * *' }), T0 + MIN * 60 + CATCHUP + 1);
  t.same(kinds(late.effects), ['save', 'tally', 'arm +7200s'], 'later than schedule_catchup: none fires');
  t.equal(late.state.missed, 1);
  t.same(late.state.jobs, []);
});

t.test('keep_jobs bounds the list, newest first', async (t) => {
  let s = schedule({ prohibit_overlap: false });
  for (let i = 1; i <= 5; i += 1) s = tick(s, T0 + i * MIN).state;
  t.same(
    s.jobs.map((j) => (j.occurrence - T0) / MIN),
    [5, 4, 3],
  );
});

t.test('pause stops the firings; resume goes on from then, without the ones it slept through', async (t) => {
  const paused = stepSchedule(schedule(), { type: 'pause', at: T0 + 10_000 });
  t.same(kinds(paused.effects), ['save', 'disarm']);
  t.equal(nextRunAt(paused.state, T0 + 10_000), null);
  t.same(tick(paused.state, T0 + 5 * MIN).effects, [], 'a paused schedule does nothing');
  t.same(stepSchedule(paused.state, { type: 'pause', at: T0 }).effects, [], 'pausing twice changes nothing');
  const resumed = stepSchedule(paused.state, { type: 'resume', at: T0 + 5 * MIN + 10_000 });
  t.same(kinds(resumed.effects), ['save', 'arm +360s']);
  t.equal(resumed.state.handled_through, T0 + 5 * MIN + 10_000);
  t.same(tick(resumed.state, T0 + 6 * MIN).state.missed, 0, 'nothing of the pause is counted missed');
  t.equal(nextRunAt(resumed.state, T0 + 5 * MIN + 10_000), T0 + 6 * MIN);
});
