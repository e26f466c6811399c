// `cli schedule` as a child process against a real infra-server child process with a scripted node: a schedule on a
// per-second expression fires ordinary jobs that `job status` shows; list, pause, resume and delete say what they
// did; a bad expression or time zone fails with the server's message naming the field, a bad option before any
// request. Each firing is a job of its own, so the schedule is paused as soon as it fired once.
import t from 'tap';
import { scheduleSchema } from '../../src/api/schedules.js';
import { show, startCliFixture } from '../support/cli-fixture.js';
import { poll } from '../support/test-node.js';

const { cli, admin } = await startCliFixture(t, ['s1']);
const GMT = String.raw`\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT`;

t.test('a schedule fires jobs that job status shows; list, pause, resume, delete', async (t) => {
  const added = await cli(['schedule', 'add', 'tick', '* * * * * *', 'chef-client', 's1', '--keep-jobs', '5']);
  t.equal(added.code, 0, show(added));
  t.match(added.stdout, /^Name: +tick\nCommand: +chef-client\nNodes: +s1\nCron: +\* \* \* \* \* \*\n/m);
  t.match(added.stdout, new RegExp(`^Next run: +${GMT}$`, 'm'));
  t.match(added.stdout, /^Overlap: +prohibited$/m);

  const fired = await poll(
    'the first firing',
    async () => {
      const s = scheduleSchema.parse(await admin.call('GET', '/organizations/default/pushy/schedules/tick'));
      return s.jobs[0];
    },
    15_000,
  );
  const paused = await cli(['schedule', 'pause', 'tick']);
  t.equal(paused.code, 0, show(paused));
  t.equal(paused.stdout, 'Schedule tick paused.\n');

  const [status, shown, list] = await Promise.all([
    cli(['job', 'status', fired.id]),
    cli(['schedule', 'show', 'tick']),
    cli(['schedule', 'list']),
  ]);
  t.equal(status.code, 0, show(status));
  t.match(status.stdout, /^Command: +chef-client$/m);
  t.match(status.stdout, /^s1 +\w+ /m, "the job ran on the schedule's node");
  t.equal(shown.code, 0, show(shown));
  t.match(shown.stdout, /^Paused: +yes$/m);
  t.match(shown.stdout, new RegExp(`^Job ID +Occurrence\\n(?:[0-9a-f]{32} +${GMT}\\n)*${fired.id} +${GMT}$`, 'm'));
  t.match(
    list.stdout,
    /^Name +Cron +Time zone +Status +Next run +Last job\ntick +\* \* \* \* \* \* +UTC +paused +- +[0-9a-f]{32}\n$/,
  );

  const resumed = await cli(['schedule', 'resume', 'tick']);
  t.equal(resumed.stdout, 'Schedule tick resumed.\n', show(resumed));
  const json = await cli(['schedule', 'list', '-F', 'json']);
  t.match(JSON.parse(json.stdout), [{ name: 'tick', paused: false, keep_jobs: 5, job: { nodes: ['s1'] } }]);
  const deleted = await cli(['schedule', 'delete', 'tick']);
  t.equal(deleted.stdout, 'Schedule tick deleted.\n', show(deleted));
  const gone = await cli(['schedule', 'show', 'tick']);
  t.equal(gone.code, 1, show(gone));
  t.match(gone.stderr, /^ERROR: .*tick.* \(404 Not Found\)$/m);
});

t.test(
  "a bad expression or time zone is the server's 400 naming the field; a bad option is a usage error",
  async (t) => {
    const [cron, zone, usage] = await Promise.all([
      cli(['schedule', 'add', 'bad', 'every day', 'uptime', 's1']),
      cli(['schedule', 'add', 'bad', '0 3 * * *', 'uptime', 's1', '--time-zone', 'Mars/Olympus']),
      cli(['schedule', 'add', 'bad', '0 3 * * *', 'uptime', 's1', '--max-failures', '1']),
    ]);
    t.equal(cron.code, 1, show(cron));
    t.match(cron.stderr, /^ERROR: Field 'cron' invalid: .* \(400 Bad Request\)$/m);
    t.equal(zone.code, 1, show(zone));
    t.equal(zone.stderr, "ERROR: Field 'time_zone' invalid: unknown time zone 'Mars/Olympus' (400 Bad Request)\n");
    t.equal(usage.code, 2, show(usage));
    t.match(
      usage.stderr,
      /^ERROR: --max-failures and --pause apply to a rollout: give its --waves too\nUsage: cli schedule add /,
    );
    const none = await cli(['schedule', 'list']);
    t.equal(none.stdout, '', show(none));
    t.equal(none.stderr, 'No schedules.\n', 'nothing was created');
  },
);
