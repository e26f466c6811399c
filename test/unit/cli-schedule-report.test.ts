// What the cli says about schedules: the table of `schedule list`, and `schedule show`'s fields and latest jobs.
import t from 'tap';
import { scheduleSchema, type ScheduleBody } from '../../src/api/schedules.js';
import { formatSchedule, formatScheduleList } from '../../src/cli/schedule-report.js';

const T0 = 'Thu, 21 May 2020 03:00:00 GMT';
const T1 = 'Fri, 22 May 2020 03:00:00 GMT';
const T2 = 'Sat, 23 May 2020 03:00:00 GMT';

function schedule(extra: Partial<ScheduleBody> = {}): ScheduleBody {
  return scheduleSchema.parse({
    name: 'nightly',
    job: { command: 'chef-client', nodes: ['web1', 'web2'], quorum: '100%' },
    cron: '0 3 * * *',
    time_zone: 'UTC',
    prohibit_overlap: true,
    keep_jobs: 10,
    paused: false,
    requestor: 'admin',
    created_at: T0,
    updated_at: T0,
    next_run_at: T2,
    jobs: [
      { id: 'b2b87f87052d213c0703eadb21bdf20e', occurrence: T1 },
      { id: 'a2b87f87052d213c0703eadb21bdf20e', occurrence: T0 },
    ],
    skipped_overlap: 1,
    missed: 0,
    ...extra,
  });
}

t.test('show: the fields, then the latest jobs newest first', async (t) => {
  t.equal(
    formatSchedule(schedule()),
    [
      'Name:            nightly',
      'Command:         chef-client',
      'Nodes:           web1, web2',
      'Cron:            0 3 * * *',
      'Time zone:       UTC',
      'Overlap:         prohibited',
      'Paused:          no',
      `Next run:        ${T2}`,
      'skipped_overlap: 1',
      'missed:          0',
      'Requestor:       admin',
      `Created_at:      ${T0}`,
      '',
      'Job ID                            Occurrence',
      `b2b87f87052d213c0703eadb21bdf20e  ${T1}`,
      `a2b87f87052d213c0703eadb21bdf20e  ${T0}`,
      '',
    ].join('\n'),
  );
});

t.test('show: a paused schedule with overlap allowed that has not fired yet', async (t) => {
  const text = formatSchedule(schedule({ paused: true, prohibit_overlap: false, next_run_at: null, jobs: [] }));
  t.match(text, /^Overlap: +allowed$/m);
  t.match(text, /^Paused: +yes$/m);
  t.match(text, /^Next run: +\(none\)$/m);
  t.match(text, /\n\nNo jobs yet\.\n$/);
});

t.test('list: one row per schedule, its state, next run and last job', async (t) => {
  const idle = schedule({ name: 'tick', cron: '* * * * * *', paused: true, next_run_at: null, jobs: [] });
  t.equal(
    formatScheduleList([schedule({ time_zone: 'Europe/Paris' }), idle]),
    [
      'Name     Cron         Time zone     Status  Next run                       Last job',
      `nightly  0 3 * * *    Europe/Paris  active  ${T2}  b2b87f87052d213c0703eadb21bdf20e`,
      'tick     * * * * * *  UTC           paused  -                              -',
      '',
    ].join('\n'),
  );
});
