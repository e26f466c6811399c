// `cli schedule add`: its arguments and options read into the schedule's POST body, the job options read as
// `job start` reads them, and the usage errors a user sees before anything is sent.
import t, { type Test } from 'tap';
import { scheduleCreateSchema } from '../../src/api/schedules.js';
import type { Cli } from '../../src/cli/cli-connection.js';
import { type CommandLine, parseCommandLine, parseOptions } from '../../src/cli/command-line.js';
import { CLI, type CliConnection } from '../../src/cli/commands.js';
import { jobBodyOptionsOf } from '../../src/cli/job-options.js';
import {
  checkCron,
  parseKeepJobs,
  SCHEDULE_ADD_OPTIONS,
  scheduleAddOptionsOf,
  scheduleBody,
} from '../../src/cli/schedule-options.js';
import { CommandError, EXIT } from '../../src/cli/terminal.js';

/** The options of `cli schedule add ARGV`, as its plan reads them. */
function addOptions(argv: string[]) {
  const { values, positionals } = parseOptions(SCHEDULE_ADD_OPTIONS, argv);
  return scheduleAddOptionsOf(positionals, values);
}

function usageMessage(t: Test, argv: string[]): string | null {
  const line: CommandLine<Cli, CliConnection> = parseCommandLine(CLI, ['schedule', 'add', ...argv]);
  t.equal(line.kind, 'usage', argv.join(' '));
  return line.kind === 'usage' ? line.message : null;
}

function usageError(t: Test, fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof CommandError) {
      t.equal(e.exitCode, EXIT.usage, 'a usage error');
      return e.message;
    }
    throw e;
  }
  throw new Error('expected a CommandError');
}

t.test('the defaults: UTC, overlap prohibited, the server keeps its number of jobs', async (t) => {
  const o = addOptions(['nightly', '0 3 * * *', 'chef-client', 'web1', 'web2']);
  t.same(o, {
    name: 'nightly',
    cron: '0 3 * * *',
    job: jobBodyOptionsOf('chef-client', ['web1', 'web2'], {}),
    timeZone: 'UTC',
    prohibitOverlap: true,
  });
  const body = scheduleBody(o, { command: 'chef-client', nodes: ['web1', 'web2'], quorum: '100%' });
  t.same(body, {
    name: 'nightly',
    job: { command: 'chef-client', nodes: ['web1', 'web2'], quorum: '100%' },
    cron: '0 3 * * *',
    time_zone: 'UTC',
    prohibit_overlap: true,
  });
  t.ok(scheduleCreateSchema.safeParse(body).success, 'the server takes the body');
});

t.test("the schedule's options, and the job's as job start reads them", async (t) => {
  const job = ['--timeout', '600', '-q', '50%', '--capture', '--env', '{"STAGE": "blue"}', '--in-dir', '/srv'];
  const rollout = ['--waves', '1,50%', '--max-failures', '1', '--pause', '30', '--as-user', 'deploy'];
  const argv = ['tick', '* * * * * *', 'uptime', 'n1', 'n2', '--time-zone', 'Europe/Paris', '--allow-overlap'];
  const o = addOptions([...argv, '--keep-jobs', '25', ...job, ...rollout, '-s', 'role:web']);
  t.equal(o.timeZone, 'Europe/Paris');
  t.equal(o.prohibitOverlap, false, '--allow-overlap');
  t.equal(o.keepJobs, 25);
  t.same(o.job, {
    command: 'uptime',
    nodes: ['n1', 'n2'],
    search: 'role:web',
    timeout: 600,
    quorum: '50%',
    votingTimeout: undefined,
    capture: true,
    env: { STAGE: 'blue' },
    dir: '/srv',
    asUser: 'deploy',
    file: undefined,
    rollout: { waves: [1, '50%'], max_failures: 1, pause: 30 },
  });
  t.match(scheduleBody(o, { command: 'uptime', nodes: ['n1'] }), {
    time_zone: 'Europe/Paris',
    prohibit_overlap: false,
    keep_jobs: 25,
  });
});

t.test('the expression is one argument: a lone field says to quote it; a nickname is one word', async (t) => {
  t.equal(checkCron('*/5 * * * *'), '*/5 * * * *');
  t.equal(checkCron('@daily'), '@daily');
  t.equal(
    usageError(t, () => checkCron('0')),
    "CRON: '0' is a single field; quote the whole expression as one argument, such as '0 3 * * *'",
  );
  t.match(usageMessage(t, ['nightly', '0', '3', '*', '*', '*', 'chef-client']), /^CRON: '0' is a single field/);
});

t.test('--keep-jobs is a whole number the server keeps', async (t) => {
  t.equal(parseKeepJobs('1'), 1);
  t.equal(parseKeepJobs('100'), 100);
  for (const bad of ['0', '101', '2.5', '-1', 'all', ''])
    t.equal(
      usageError(t, () => parseKeepJobs(bad)),
      `--keep-jobs: '${bad}' is not a whole number from 1 to 100`,
      `'${bad}' is refused`,
    );
});

t.test('usage errors before anything is sent', async (t) => {
  const add = ['nightly', '0 3 * * *', 'chef-client', 'web1'];
  t.equal(
    usageMessage(t, [...add, '--max-failures', '1']),
    '--max-failures and --pause apply to a rollout: give its --waves too',
  );
  t.equal(
    usageMessage(t, [...add, '-q', 'half']),
    "-q/--quorum: 'half' is not a node count or a percentage from 1% to 100%",
  );
  t.match(usageMessage(t, [...add, '--nowait']), /--nowait/, "job start's waiting options are not a schedule's");
  t.equal(usageMessage(t, ['nightly', '0 3 * * *']), 'cli schedule add takes at least 3 arguments, got 2');
  t.equal(parseCommandLine(CLI, [...['schedule', 'add'], ...add, '--allow-overlap']).kind, 'run');
});
