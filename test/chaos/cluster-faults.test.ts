// A cluster in use through a fixed schedule of faults (seed 4: SIGSTOP of the default organization's owner, then its
// kill -9, then SIGSTOP and kill -9 of another member), each struck during a job over real push-jobs-client nodes and
// healed, with a job started right after: the checker (test/support/chaos/) finds every invariant of the cluster's
// design held, reading the server's answers and each node's own log. bench/chaos.bench.ts runs the long version.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { violationLine } from '../support/chaos/report.js';
import { runChaos } from '../support/chaos/runner.js';

// Passing, the run takes about two minutes; failing, each round waits its jobs out to their deadlines, so that the
// checker still reports what went wrong instead of the test timing out first.
t.setTimeout(600_000);

const SEED = 4;
const ROUNDS = 4;

t.test(
  'four kills and pauses of members in use: every job ends, no result is lost, every node comes back',
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'infra-chaos-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const result = await runChaos(t, {
      seed: SEED,
      rounds: ROUNDS,
      members: 3,
      nodes: 4,
      redis: 'single',
      balancer: true,
      kinds: ['kill', 'pause'],
      // Both past the lease (3 s), so the member hit is deposed and its partitions and nodes move.
      durations: { kill: { min: 5000, max: 5000 }, pause: { min: 6000, max: 6000 } },
      leaseTtlS: 3,
      heartbeatMs: 200,
      long: { commandLine: 'sleep 4', runTimeoutS: 12, votingTimeoutS: 5 },
      short: { commandLine: 'echo chaos', runTimeoutS: 8, votingTimeoutS: 5 },
      dir,
      log: (line) => t.comment(line),
    });
    t.comment(result.report);

    // The run was a real one, so that "no violation" means something: each fault struck and was healed, each long job
    // was created and run, each node's log was read, and the samples cover the run.
    const h = result.history;
    t.equal(h.faults.filter((e) => e.phase === 'start' && e.error === undefined).length, ROUNDS, 'every fault struck');
    t.equal(h.faults.filter((e) => e.phase === 'end' && e.error === undefined).length, ROUNDS, 'and was healed');
    t.ok(
      h.faults.some((e) => e.phase === 'start' && e.detail.includes('owner of the default organization')),
      'the default organization’s owner was among those hit',
    );
    const longs = h.submissions.filter((s) => s.role === 'long');
    t.ok(longs.length === ROUNDS && longs.every((s) => s.id !== null), 'every long job was created');
    for (const node of h.settings.nodes) {
      const reported = Object.values(h.records[node]?.jobs ?? {}).filter((j) => j.outcome !== undefined);
      t.ok(reported.length > 0, `${node}'s log shows results it reported`);
    }
    t.ok(h.samples.filter((s) => s.nodes !== null).length >= 40, 'node states were sampled throughout');

    t.same(result.violations.map(violationLine), [], `the checker finds no violation (seed ${SEED})`);
  },
);
