// What the cli says about a job: spec 4.4's report, the node table, the job list, and the one-line reason a
// job did not fully succeed (which decides the exit code of `cli job start`).
import t from 'tap';
import { jobSchema, type JobBody } from '../../src/api/push-jobs.js';
import { formatJobList } from '../../src/cli/jobs.js';
import { formatJobReport, jobFailure } from '../../src/cli/job-report.js';

const T0 = 'Thu, 21 May 2020 13:14:32 GMT';
const T1 = 'Thu, 21 May 2020 13:14:40 GMT';

/** A job as the server answers it: every node reached its status at T1, and the quorum is all of them. */
function job(status: JobBody['status'], nodes: JobBody['nodes'], extra: Partial<JobBody> = {}): JobBody {
  const names = Object.values(nodes).flat();
  return jobSchema.parse({
    id: 'a2b87f87052d213c0703eadb21bdf20e',
    command: 'chef-client',
    run_timeout: 3600,
    status,
    created_at: T0,
    updated_at: T1,
    quorum: names.length,
    nodes,
    capture_output: false,
    node_updated_at: Object.fromEntries(names.map((n) => [n, T1])),
    ...extra,
  });
}

t.test('the report has the fields of spec 4.4, aligned, then every node by name', async (t) => {
  const report = formatJobReport(
    job('quorum_failed', { was_ready: ['web2', 'web1'], nacked: ['db1'], unavailable: ['cache1'] }, { quorum: 4 }),
  );
  t.equal(
    report,
    [
      'Job ID:      a2b87f87052d213c0703eadb21bdf20e',
      'Command:     chef-client',
      `Created_at:  ${T0}`,
      'unavailable: cache1',
      'was_ready:   web1, web2',
      'Quorum:      4 of 4 nodes',
      'On_timeout:  3600 seconds',
      'Status:      quorum_failed',
      '',
      'Node name  Status       Last updated',
      `cache1     unavailable  ${T1}`,
      `db1        nacked       ${T1}`,
      `web1       was_ready    ${T1}`,
      `web2       was_ready    ${T1}`,
      '',
    ].join('\n'),
  );
});

t.test('empty unavailable and was_ready lists say so', async (t) => {
  const report = formatJobReport(job('complete', { succeeded: ['n1'] }));
  t.match(report, /^unavailable: \(none\)$/m);
  t.match(report, /^was_ready: {3}\(none\)$/m);
  t.match(report, /^Quorum: {6}1 of 1 nodes$/m, 'the server always sends the quorum');
});

t.test("each node's last update is when it reached its present status", async (t) => {
  const report = formatJobReport(
    job('running', { succeeded: ['web1'], running: ['web2'] }, { node_updated_at: { web1: T1, web2: T0 } }),
  );
  t.match(report, new RegExp(`^web1 +succeeded +${T1}\nweb2 +running +${T0}\n$`, 'm'));
});

t.test('only a complete job whose every node succeeded is a success', async (t) => {
  t.equal(jobFailure(job('complete', { succeeded: ['a', 'b', 'c'] })), null);
  t.equal(
    jobFailure(job('quorum_failed', { nacked: ['a'], was_ready: ['b', 'c'] })),
    'Job quorum_failed: 1 of 3 nodes nacked',
  );
  t.equal(
    jobFailure(job('complete', { succeeded: ['a'], failed: ['b'], nacked: ['c'] })),
    'Job complete: 1 of 3 nodes failed, 1 nacked',
    'a node that refused or failed fails the run even when quorum was met (reference 8 step 7 let nacked pass)',
  );
  t.equal(
    jobFailure(job('complete', { succeeded: ['a'], unavailable: ['b'] })),
    'Job complete: 1 of 2 nodes unavailable',
  );
  t.equal(
    jobFailure(job('timed_out', { succeeded: ['a'], timed_out: ['b', 'c'] })),
    'Job timed_out: 2 of 3 nodes timed_out',
  );
  t.equal(jobFailure(job('aborted', { aborted: ['a'] })), 'Job aborted: 1 of 1 node aborted');
  t.equal(jobFailure(job('crashed', { succeeded: ['a'] })), 'Job crashed');
});

t.test('the job list is one aligned row per job', async (t) => {
  const jobs = [
    { id: 'j2', command: 'uptime', status: 'running' as const, run_timeout: 60, created_at: T1, updated_at: T1 },
    {
      id: 'j1',
      command: 'chef-client -o base',
      status: 'complete' as const,
      run_timeout: 3600,
      created_at: T0,
      updated_at: T1,
    },
  ];
  t.equal(
    formatJobList(jobs),
    [
      'Job ID  Status    Created_at                     Command',
      `j2      running   ${T1}  uptime`,
      `j1      complete  ${T0}  chef-client -o base`,
      '',
    ].join('\n'),
  );
});

t.test('an unknown job status is refused rather than waited on forever', async (t) => {
  const answer = { ...job('running', { running: ['n1'] }), status: 'pending' };
  const parsed = jobSchema.safeParse(answer);
  t.notOk(parsed.success);
  t.same(
    parsed.error?.issues.map((i) => i.path),
    [['status']],
    'the status alone is what is refused',
  );
});
