// Schedules through the REST API on the file store (test/e2e/schedule-failover.test.ts runs them on Redis, across a
// take-over): created, listed, shown, paused, resumed and deleted with signed requests; bad bodies refused naming the
// field; authorized as job creation; each firing an ordinary job listed under the schedule; across a restart every
// occurrence fired once or counted missed.
import t from 'tap';
import { jobSchema } from '../../src/api/push-jobs.js';
import { scheduleListSchema, scheduleSchema, type ScheduleBody } from '../../src/api/schedules.js';
import { createMember } from '../support/api-fixtures.js';
import { until } from '../support/deadline.js';
import { startTestServer } from '../support/server.js';

const PUSHY = '/organizations/default/pushy';
// Every second: firings come quickly. The jobs name nodes nobody runs, so each ends quorum_failed at once.
const EVERY_SECOND = { name: 'tick', job: { command: 'chef-client', nodes: ['ghost'] }, cron: '* * * * * *' };

t.test('schedules', async (t) => {
  let s = await startTestServer(t, 'file', { heartbeat_interval: 100, voting_timeout: 2, schedule_catchup: 30 });
  const show = async (name: string): Promise<ScheduleBody> => {
    const res = await s.admin.request('GET', `${PUSHY}/schedules/${name}`);
    t.equal(res.status, 200, JSON.stringify(res.body));
    return scheduleSchema.parse(res.body);
  };

  t.test('a bad schedule is 400 and names the field', async (t) => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['no cron', { name: 'x', job: EVERY_SECOND.job }, /Field 'cron' missing/],
      ['a cron that is no cron', { ...EVERY_SECOND, cron: 'every day' }, /^Field 'cron' invalid: /],
      ['a cron that never fires', { ...EVERY_SECOND, cron: '0 0 30 2 *' }, /^Field 'cron' invalid: .* never fires/],
      ['an unknown time zone', { ...EVERY_SECOND, time_zone: 'Mars/Olympus' }, /^Field 'time_zone' invalid/],
      ['a bad job', { ...EVERY_SECOND, job: { command: 'x', nodes: [] } }, /^Field 'job.nodes' invalid/],
      [
        'a job whose quorum is more than its nodes',
        { ...EVERY_SECOND, job: { ...EVERY_SECOND.job, quorum: 3 } },
        /^Field 'job.quorum' invalid/,
      ],
      [
        'a rollout with too few nodes',
        { ...EVERY_SECOND, job: { ...EVERY_SECOND.job, rollout: { waves: [1, 1] } } },
        /^Field 'job.rollout.waves' invalid/,
      ],
      ['an unknown field', { ...EVERY_SECOND, colour: 'red' }, /colour/],
    ];
    for (const [what, body, message] of cases) {
      const res = await s.admin.request('POST', `${PUSHY}/schedules`, body);
      t.equal(res.status, 400, `${what}: 400`);
      t.match(res.body, { error: [message] }, `${what}: ${JSON.stringify(res.body)}`);
    }
    const list = await s.admin.request('GET', `${PUSHY}/schedules`);
    t.same(list.body, [], 'nothing was created');
  });

  t.test('only who may start jobs may schedule them; members read them', async (t) => {
    const member = await createMember(t, s, 'default', 'reader');
    const refused = await member.request('POST', `${PUSHY}/schedules`, { ...EVERY_SECOND, name: 'theirs' });
    t.equal(refused.status, 403);
    t.match(refused.body, { error: [/missing create permission/] });
    const made = await s.admin.request('POST', `${PUSHY}/schedules`, {
      ...EVERY_SECOND,
      name: 'hourly',
      cron: '0 * * * *',
    });
    t.equal(made.status, 201, JSON.stringify(made.body));
    t.equal((await member.request('GET', `${PUSHY}/schedules/hourly`)).status, 200, 'a member reads it');
    t.equal((await member.request('POST', `${PUSHY}/schedules/hourly/pause`)).status, 403);
    t.equal((await member.request('DELETE', `${PUSHY}/schedules/hourly`)).status, 403);
    const again = await s.admin.request('POST', `${PUSHY}/schedules`, { ...EVERY_SECOND, name: 'hourly' });
    t.equal(again.status, 409, 'a name is taken once');
    t.equal((await s.admin.request('GET', `${PUSHY}/schedules/nope`)).status, 404);
    t.equal((await s.admin.request('DELETE', `${PUSHY}/schedules/hourly`)).status, 200);
    t.equal((await s.admin.request('GET', `${PUSHY}/schedules/hourly`)).status, 404, 'deleted');
  });

  t.test('each firing starts an ordinary job, listed under the schedule', async (t) => {
    const made = await s.admin.request('POST', `${PUSHY}/schedules`, EVERY_SECOND);
    t.equal(made.status, 201, JSON.stringify(made.body));
    const created = scheduleSchema.parse(made.body);
    t.match(created, { name: 'tick', cron: '* * * * * *', time_zone: 'UTC', paused: false, requestor: 'admin' });
    t.ok(created.next_run_at !== null, 'it says when it fires next');
    const fired = await until(
      'three firings',
      async () => {
        const shown = await show('tick');
        return shown.jobs.length >= 3 ? shown : undefined;
      },
      20_000,
    );
    const occurrences = fired.jobs.map((j) => Date.parse(j.occurrence));
    t.same(
      occurrences,
      [...occurrences].sort((a, b) => b - a),
      'newest first',
    );
    t.equal(new Set(occurrences).size, occurrences.length, 'each occurrence once');
    const first = fired.jobs.at(-1);
    const job = jobSchema.parse((await s.admin.request('GET', `${PUSHY}/jobs/${first?.id}`)).body);
    t.match(job, { command: 'chef-client', schedule: { name: 'tick', occurrence: first?.occurrence } });
    const status = await s.admin.request('GET', '/_status');
    t.ok(
      ((status.body as { actors: { schedule_firings?: { fired?: number } } }).actors.schedule_firings?.fired ?? 0) >= 3,
      'GET /_status counts the firings',
    );
    const list = scheduleListSchema.parse((await s.admin.request('GET', `${PUSHY}/schedules`)).body);
    t.same(
      list.map((x) => x.name),
      ['tick'],
    );
  });

  t.test('pause stops the firings and resume starts them again', async (t) => {
    const paused = await s.admin.request('POST', `${PUSHY}/schedules/tick/pause`);
    t.equal(paused.status, 200);
    t.match(paused.body, { paused: true, next_run_at: null });
    const atPause = (await show('tick')).jobs.length;
    // Another schedule's firings show the server's clock going by: two of them, and `tick` fired none meanwhile.
    await s.admin.request('POST', `${PUSHY}/schedules`, { ...EVERY_SECOND, name: 'probe' });
    await until(
      'two firings of another schedule',
      async () => ((await show('probe')).jobs.length >= 2 ? true : undefined),
      20_000,
    );
    t.equal((await show('tick')).jobs.length, atPause, 'no firing while paused');
    await s.admin.request('DELETE', `${PUSHY}/schedules/probe`);
    const resumed = await s.admin.request('POST', `${PUSHY}/schedules/tick/resume`);
    t.match(resumed.body, { paused: false });
    const again = await until(
      'a firing after resume',
      async () => {
        const shown = await show('tick');
        return shown.jobs.length > atPause ? shown : undefined;
      },
      20_000,
    );
    t.equal(again.missed, 0, 'what the pause slept through is not missed');
    await s.admin.request('POST', `${PUSHY}/schedules/tick/pause`);
  });

  t.test('across a restart every occurrence is fired once or counted missed, none twice', async (t) => {
    await s.admin.request('POST', `${PUSHY}/schedules`, {
      ...EVERY_SECOND,
      name: 'beat',
      prohibit_overlap: false,
      keep_jobs: 100,
    });
    await until('two firings', async () => ((await show('beat')).jobs.length >= 2 ? true : undefined), 20_000);
    s = await s.restart();
    const before = (await show('beat')).jobs.length;
    const after = await until(
      'two firings after the restart',
      async () => {
        const shown = await show('beat');
        return shown.jobs.length >= before + 2 ? shown : undefined;
      },
      20_000,
    );
    await s.admin.request('POST', `${PUSHY}/schedules/beat/pause`);
    const occurrences = after.jobs.map((j) => Date.parse(j.occurrence)).sort((a, b) => a - b);
    t.equal(new Set(occurrences).size, occurrences.length, 'no occurrence fired twice');
    const first = occurrences[0] ?? 0;
    const last = occurrences.at(-1) ?? 0;
    t.equal(occurrences.length + after.missed, (last - first) / 1000 + 1, 'every second fired or counted missed');
    const jobs = await Promise.all(
      after.jobs.map(async (j) => jobSchema.parse((await s.admin.request('GET', `${PUSHY}/jobs/${j.id}`)).body)),
    );
    t.same(
      jobs.map((j) => j.schedule?.occurrence),
      after.jobs.map((j) => j.occurrence),
      'each listed job is stored, for its occurrence',
    );
  });
});
