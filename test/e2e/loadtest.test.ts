// infra-loadtest as users run it: the compiled bin in a child process against a real server (its own with
// --spawn, or one given by --server), simulated nodes over real ZeroMQ, figures read from its --json line.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { nodeRecordLineSchema } from '../../src/loadtest/node-record.js';
import { exitMessage, loadtest, measured } from '../support/loadtest-run.js';

// Seven runs of the tester, each a few seconds of provisioning and jobs.
t.setTimeout(300_000);

t.test('--spawn, 50 nodes, 5 jobs: every job complete and as expected, with every figure', async (t) => {
  const { run, figures: f } = await loadtest(t, ['--spawn', '--nodes', '50', '--jobs', '5']);
  t.equal(run.code, 0, exitMessage(run));
  t.equal(f.nodes, 50);
  t.equal(f.jobs, 5);
  t.same(f.jobs_by_status, { complete: 5 });
  t.same(f.quorum_outcomes_correct, { correct: 5, total: 5, ambiguous: 0, mismatches: [] });
  for (const name of ['commit_to_all_acked_ms', 'post_to_running_ms', 'post_to_complete_ms'] as const)
    t.ok(measured.safeParse(f[name]).success, `${name} measured: ${JSON.stringify(f[name])}`);
  const phases = Object.entries(f.job_phases_ms);
  t.equal(phases.length, 7, 'a job is split into seven phases');
  for (const [phase, ms] of phases) t.ok(ms !== null && ms >= 0, `${phase} measured: ${ms}`);
  t.ok(f.offered_hb_per_s > 0, 'heartbeats were offered');
  t.ok((f.processed_hb_per_s ?? 0) > 0, 'the server processed heartbeats');
  t.equal(f.dropped, 0);
  t.equal(f.nodes_marked_down, 0, 'no node marked down: every one kept beating');
  t.match(run.stdout, /nodes marked down by the server: 0\n/);
  t.ok((f.server_cpu_pct ?? -1) >= 0, 'the spawned server CPU share is read');
  t.ok((f.server_rss_mb ?? 0) > 0, 'the spawned server memory is read');
  t.same(f.errors, []);
  // A histogram of 10 ms resolution never reads below it once sampled: 0 would mean the delay went unmeasured.
  t.ok(f.tester_lag_max_ms >= 10, `the tester's own event-loop delay is measured: ${f.tester_lag_max_ms} ms`);
  t.ok((f.tester_cpu_pct ?? 0) > 0, `the tester's own CPU is read: ${f.tester_cpu_pct}%`);
  t.match(run.stdout, /load tester: [\d.]+% CPU, worst event-loop delay \d+ ms/);
  t.match(run.stdout, /quorum outcomes correct: 5 of 5/, 'the summary for people comes before the JSON');
});

t.test('--record: each node’s own record of every job it committed to, ran and reported', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'loadtest-record-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'nodes.jsonl');
  const { run, figures: f } = await loadtest(t, ['--spawn', '--nodes', '10', '--jobs', '2', '--record', file]);
  t.equal(run.code, 0, exitMessage(run));
  t.same(f.jobs_by_status, { complete: 2 });
  const lines = (await readFile(file, 'utf8'))
    .trimEnd()
    .split('\n')
    .map((l) => nodeRecordLineSchema.parse(JSON.parse(l)));
  const nodes = new Set(lines.map((l) => l.node));
  t.equal(nodes.size, 10, 'every node wrote its record');
  for (const node of nodes) {
    const own = lines.filter((l) => l.node === node);
    t.ok(
      own.some((l) => l.event === 'connected'),
      `${node} says where it connected`,
    );
    for (const event of ['committed', 'ran', 'result'] as const)
      t.equal(own.filter((l) => l.event === event).length, 2, `${node}: ${event} for each job`);
  }
});

t.test(
  '--waves 10%: a job in ten waves, each asked once the one before ended, and the time between them',
  async (t) => {
    const file = join(t.testdir(), 'nodes.jsonl');
    const { run, figures: f } = await loadtest(t, [
      '--spawn',
      '--nodes',
      '30',
      '--jobs',
      '1',
      '--waves',
      '10%',
      '--record',
      file,
    ]);
    t.equal(run.code, 0, exitMessage(run));
    t.same(f.jobs_by_status, { complete: 1 });
    t.same(f.quorum_outcomes_correct, { correct: 1, total: 1, ambiguous: 0, mismatches: [] });
    const w = f.between_waves_ms;
    t.same([w?.waves_complete, w?.gaps, w?.pause_s], [10, 9, 0], 'ten waves complete, nine gaps between them');
    // Every gap holds a result's and a commit's trip and the server's steps between: above 0, well below a second.
    t.ok(
      w !== null && w.p50 !== null && w.max !== null && w.p50 > 0 && w.p50 <= w.max && w.max < 5000,
      JSON.stringify(w),
    );
    t.match(run.stdout, /^between waves: +p50 [\d.]+, max [\d.]+ ms over 9 gaps, pause 0 s included/m);
    t.same(f.commit_to_all_acked_ms, { p50: null, p99: null, max: null }, 'a job in waves has no single fan-out');

    // The waves take the nodes by name, three each: a node hears of the job only once the wave before it ended.
    const lines = (await readFile(file, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => nodeRecordLineSchema.parse(JSON.parse(l)));
    const names = [...new Set(lines.map((l) => l.node))].sort();
    t.equal(names.length, 30);
    const at = (event: 'committed' | 'result', wave: number) =>
      lines
        .filter((l) => l.event === event && names.indexOf(l.node) >= wave * 3 && names.indexOf(l.node) < wave * 3 + 3)
        .map((l) => l.at);
    for (let wave = 1; wave < 10; wave++) {
      t.equal(at('committed', wave).length, 3, `wave ${wave + 1}: each node committed once`);
      t.ok(
        Math.min(...at('committed', wave)) >= Math.max(...at('result', wave - 1)),
        `wave ${wave + 1} committed after every result of wave ${wave}`,
      );
    }
  },
);

t.test('nacking and silent nodes make a 90% quorum fail, and the tester expects it', async (t) => {
  const { run, figures: f } = await loadtest(t, [
    '--spawn',
    '--nodes',
    '40',
    '--jobs',
    '2',
    '--nack',
    '10%',
    '--silent',
    '10%',
    '--quorum',
    '90%',
    '--voting-timeout',
    '2',
  ]);
  t.equal(run.code, 0, exitMessage(run));
  t.same(f.jobs_by_status, { quorum_failed: 2 });
  t.same(f.quorum_outcomes_correct, { correct: 2, total: 2, ambiguous: 0, mismatches: [] });
  t.same(f.post_to_running_ms, { p50: null, p99: null, max: null }, 'no job ran');
});

t.test(
  '--nodes-per-connection: nodes sharing connections, some crashing and coming back, are told apart',
  async (t) => {
    const { run, figures: f } = await loadtest(t, [
      '--spawn',
      '--nodes',
      '30',
      '--nodes-per-connection',
      '10',
      '--jobs',
      '2',
      '--crash-while-running',
      '10%',
      '--fail',
      '10%',
      '--run-ms',
      '200',
    ]);
    t.equal(run.code, 0, exitMessage(run));
    t.equal(f.nodes_per_connection, 10);
    t.equal(f.quorum_outcomes_correct.correct, 2, JSON.stringify(f.quorum_outcomes_correct));
    // The second job starts while the crashed nodes may still be away: it may fail its quorum, as expected.
    t.ok((f.jobs_by_status.complete ?? 0) >= 1, 'the first job completes with its failing and crashed nodes');
    // Each node signs as itself: a message taken for another node's, or a replay across the shared socket,
    // would show here.
    t.same(f.dropped_by_reason, { server: {}, tester: {} });
    t.same(f.errors, []);
  },
);

t.test('--heartbeat-only with flapping nodes: offline detection is measured', async (t) => {
  const { run, figures: f } = await loadtest(t, [
    '--spawn',
    '--heartbeat-interval',
    '200',
    '--nodes',
    '20',
    '--flap',
    '50%',
    '--heartbeat-only',
    '--seconds',
    '6',
  ]);
  t.equal(run.code, 0, exitMessage(run));
  t.equal(f.jobs, 0);
  t.ok(f.offline_detect_ms.count > 0, `flapping nodes were seen offline (${JSON.stringify(f.offline_detect_ms)})`);
  t.ok(measured.safeParse(f.offline_detect_ms).success, 'detection times measured');
  t.ok((f.offline_detect_ms.p50 ?? 0) > 0, 'a node is seen offline only after its last heartbeat');
  t.ok(
    (f.nodes_marked_down ?? 0) >= f.offline_detect_ms.count,
    `the server counts the downs it marked (${f.nodes_marked_down}), at least those the tester saw`,
  );
  t.ok(f.offered_hb_per_s > 0 && (f.processed_hb_per_s ?? 0) > 0);
});

t.test('--abort-after: jobs aborted while their commands run are expected aborted', async (t) => {
  const { run, figures: f } = await loadtest(t, [
    '--spawn',
    '--nodes',
    '10',
    '--jobs',
    '2',
    '--run-ms',
    '20000',
    '--abort-after',
    '1500',
  ]);
  t.equal(run.code, 0, exitMessage(run));
  t.same(f.jobs_by_status, { aborted: 2 });
  t.same(f.quorum_outcomes_correct, { correct: 2, total: 2, ambiguous: 0, mismatches: [] });
});
