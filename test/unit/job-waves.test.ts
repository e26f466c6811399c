// Rollouts in the job machine: the plan (wave sizes, nodes by name, quorum per wave, the failure budget), each wave
// voting and running as a job does, the pause between waves on the job's own clock (the events' times), a halt
// once failures pass the budget, and what an abort, a quorum failure, a timeout, a restart leave of the waves.
import t from 'tap';
import { newJob, resolveQuorum, stepJob } from '../../actors/push/job-machine.js';
import type { JobEffect, JobEvent, JobState } from '../../actors/push/job-model.js';
import { budgetSpent, planRollout, RolloutError, waveNodes, waveSizes } from '../../actors/push/rollout-plan.js';
import { jobJson, jobNodesByStatus } from '../../src/api/job-view.js';
import { jobStartSchema } from '../../src/api/push-jobs.js';
import type { RolloutRequest } from '../../src/api/rollout.js';

const T0 = Date.UTC(2026, 11, 2, 9, 0, 0);
const NODES = ['f', 'e', 'd', 'c', 'b', 'a']; // in no order: the waves take them by name

function rollout(
  request: Partial<RolloutRequest> & Pick<RolloutRequest, 'waves'>,
  quorum?: number | string,
  nodes = NODES,
): JobState {
  const plan = planRollout({ pause: 0, ...request }, nodes.length, (n) => resolveQuorum(quorum, n));
  return newJob({
    id: 'job1',
    command: 'deploy',
    nodes,
    run_timeout: 300,
    voting_timeout: 60,
    quorum: resolveQuorum(quorum, nodes.length),
    at: T0,
    rollout: plan,
  });
}

function step(s: JobState, event: JobEvent): JobEffect[] {
  return stepJob(s, event).effects;
}

const all = new Set(NODES);
const sent = (effects: JobEffect[], message: string) =>
  effects.flatMap((e) => (e.type === 'send' && e.message === message ? e.nodes : []));
const armed = (effects: JobEffect[]) => effects.flatMap((e) => (e.type === 'arm' ? [`${e.timer}@${e.at - T0}`] : []));
const waveNotes = (effects: JobEffect[]) =>
  effects.flatMap((e) =>
    e.type === 'feed'
      ? e.notes.flatMap((n) =>
          n.event === 'wave_start'
            ? [`wave_start ${n.data.wave} (${n.data.nodes} nodes, quorum ${n.data.quorum})`]
            : n.event === 'wave_end'
              ? [`wave_end ${n.data.wave} ${n.data.status} (${n.data.failures} failures)`]
              : n.event === 'job_complete'
                ? [`job_complete ${n.data.status}`]
                : [],
        )
      : [],
  );

/** Every node of `nodes` acks the commit, then reports `result`, each a second apart from `at`. */
function runWave(s: JobState, nodes: string[], at: number, result: (node: string) => 'succeeded' | 'failed') {
  const effects: JobEffect[] = [];
  let when = at;
  for (const node of nodes) effects.push(...step(s, { type: 'ack_commit', node, at: (when += 1000) }));
  for (const node of nodes) effects.push(...step(s, { type: 'ack_run', node, at: (when += 1000) }));
  for (const node of nodes) effects.push(...step(s, { type: result(node), node, at: (when += 1000) }));
  return { effects, at: when };
}

t.test('the plan: wave sizes, the nodes of each by name, the last size repeated', async (t) => {
  t.same(waveSizes([1, '10%', '100%'], 20), [1, 2, 17], 'a canary, 10% of the job, then the rest');
  t.same(waveSizes([2], 5), [2, 2, 1], 'the last size repeats until every node is taken');
  t.same(waveSizes(['50%'], 3), [2, 1], 'a percentage rounds up');
  t.same(waveSizes([10], 3), [3], 'a wave larger than the job takes it whole');
  t.same(waveNodes(['a', 'b', 'c', 'd', 'e'], [1, 2, 2], 1), ['b', 'c']);
  t.throws(
    () => waveSizes([1, '10%', '100%'], 2),
    new RolloutError("Field 'rollout.waves' invalid: 3 waves need more nodes than the 2 of the job"),
    'three waves need three nodes at least',
  );
  t.throws(
    () => planRollout({ waves: [1, 2], pause: 0 }, 3, () => 2),
    /Field 'quorum' invalid: 2 is more than the 1 nodes of wave 1/,
  );
  const plan = planRollout({ waves: [1, '50%'], pause: 30, max_failures: '10%' }, 4, (n) => resolveQuorum('50%', n));
  t.same(plan.sizes, [1, 2, 1]);
  t.same(
    plan.waves.map((w) => w.quorum),
    [1, 1, 1],
    'a percentage quorum counts inside each wave',
  );
  t.same([plan.pause, plan.max_failures, plan.current, plan.next_wave_at], [30, '10%', 0, null]);
});

t.test('the failure budget: a count, or a share of the nodes that ran', async (t) => {
  t.notOk(budgetSpent(null, 100, 100), 'no budget: never spent');
  t.notOk(budgetSpent(2, 2, 10), 'two failures are within a budget of 2');
  t.ok(budgetSpent(2, 3, 10), 'the third passes it');
  t.ok(budgetSpent(0, 1, 1), 'a budget of 0 stops at the first failure');
  t.notOk(budgetSpent('10%', 1, 10), '1 of 10 is within 10%');
  t.ok(budgetSpent('10%', 1, 1), 'a failed canary is past 10% of one node');
});

t.test('bad rollouts are refused naming the field', async (t) => {
  const body = (rollout: unknown) => jobStartSchema.safeParse({ command: 'x', nodes: ['a'], rollout });
  const message = (rollout: unknown) => {
    const parsed = body(rollout);
    return parsed.success
      ? 'accepted'
      : `${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`;
  };
  t.match(message({ waves: [0] }), /^rollout\.waves\.0: a wave has at least one node/);
  t.match(message({ waves: ['0%'] }), /^rollout\.waves\.0: /);
  t.match(message({ waves: ['120%'] }), /^rollout\.waves\.0: a percentage from/);
  t.match(message({ waves: [1], max_failures: '101%' }), /^rollout\.max_failures: /);
  t.match(message({ waves: [] }), /^rollout\.waves: /);
  t.match(message({ waves: [1], pause: -1 }), /^rollout\.pause: /);
  t.match(message({ waves: [1], extra: 1 }), /^rollout: /);
  t.equal(message({ waves: [1, '10%', '100%'], max_failures: 2, pause: 30 }), 'accepted');
});

t.test('a rollout over three waves: the canary, then the next wave after the pause, then the rest', async (t) => {
  const s = rollout({ waves: [1, 2, '100%'], max_failures: 1, pause: 30 });
  t.same(jobNodesByStatus(s), { new: ['a'], waiting: ['b', 'c', 'd', 'e', 'f'] }, 'the canary is the first by name');
  const start = step(s, { type: 'start', at: T0, available: all });
  t.same(sent(start, 'commit'), ['a'], 'only the canary is asked');
  t.same(waveNotes(start), ['wave_start 1 (1 nodes, quorum 1)']);
  t.equal(s.status, 'voting');

  const wave1 = runWave(s, ['a'], T0, () => 'succeeded');
  t.equal(s.status, 'running', 'the job runs on between waves');
  t.same(armed(wave1.effects).at(-1), `wave@${wave1.at - T0 + 30_000}`, 'the next wave is due a pause after');
  t.same(waveNotes(wave1.effects), ['wave_end 1 complete (0 failures)']);
  t.equal(s.rollout?.next_wave_at, wave1.at + 30_000);
  t.match(
    wave1.effects.filter((e) => e.type === 'persist').at(-1),
    { job: true },
    "the wave's end and the pause are stored with the node that ended it",
  );
  t.same(sent(wave1.effects, 'commit'), [], 'nobody else is asked during the pause');

  t.same(
    step(s, { type: 'next_wave', at: wave1.at, due: wave1.at, available: all }).map((e) => e.type),
    ['ignored'],
    'stale',
  );
  const next = step(s, { type: 'next_wave', at: wave1.at + 30_000, due: wave1.at + 30_000, available: all });
  t.same(sent(next, 'commit'), ['b', 'c']);
  t.same(waveNotes(next), ['wave_start 2 (2 nodes, quorum 2)']);
  t.equal(s.status, 'voting');

  const wave2 = runWave(s, ['b', 'c'], wave1.at + 30_000, () => 'succeeded');
  const last = step(s, { type: 'next_wave', at: wave2.at + 30_000, due: wave2.at + 30_000, available: all });
  t.same(sent(last, 'commit'), ['d', 'e', 'f']);
  const wave3 = runWave(s, ['d', 'e', 'f'], wave2.at + 30_000, () => 'succeeded');
  t.same(waveNotes(wave3.effects), ['wave_end 3 complete (0 failures)', 'job_complete complete']);
  t.equal(s.status, 'complete');
  t.same(
    s.rollout?.waves.map((w) => w.status),
    ['complete', 'complete', 'complete'],
  );
  t.same(
    armed(wave3.effects).filter((a) => a.startsWith('wave')),
    [],
    'no wave after the last',
  );
});

t.test('a wave that starts late is stamped with when it started, not when it was due', async (t) => {
  const s = rollout({ waves: [1], pause: 10 }, undefined, ['a', 'b']);
  step(s, { type: 'start', at: T0, available: all });
  const wave1 = runWave(s, ['a'], T0, () => 'succeeded');
  const due = wave1.at + 10_000;
  const late = step(s, { type: 'next_wave', at: due + 40, due, available: all });
  t.same(sent(late, 'commit'), ['b']);
  t.equal(s.rollout?.waves[1]?.started_at, due + 40);
  t.same(
    late.flatMap((e) => (e.type === 'feed' ? [e.at] : [])),
    [due + 40],
    'the feed says when',
  );
});

t.test('past max_failures no further wave starts, and its nodes are skipped, never asked', async (t) => {
  const s = rollout({ waves: [1, 2, '100%'], max_failures: 1 });
  step(s, { type: 'start', at: T0, available: all });
  const wave1 = runWave(s, ['a'], T0, () => 'succeeded');
  t.same(armed(wave1.effects).at(-1), `wave@${wave1.at - T0}`, 'no pause: the next wave is due at once');
  step(s, { type: 'next_wave', at: wave1.at, due: wave1.at, available: all });
  const wave2 = runWave(s, ['b', 'c'], wave1.at, () => 'failed');
  t.same(waveNotes(wave2.effects), ['wave_end 2 complete (2 failures)', 'job_complete max_failures_exceeded']);
  t.equal(s.status, 'max_failures_exceeded');
  t.same(jobNodesByStatus(s), { succeeded: ['a'], failed: ['b', 'c'], skipped: ['d', 'e', 'f'] });
  t.same(
    s.rollout?.waves.map((w) => w.status),
    ['complete', 'complete', 'skipped'],
  );
  t.ok(
    wave2.effects.some((e) => e.type === 'finished'),
    'the job is over',
  );
  t.same(sent(wave2.effects, 'abort'), [], 'the skipped nodes were never asked, so they are told nothing');
  t.same(
    step(s, { type: 'next_wave', at: wave2.at, due: wave2.at, available: all }).map((e) => e.type),
    ['ignored'],
  );
});

t.test('a failure within the budget lets the next wave start', async (t) => {
  const s = rollout({ waves: [2], max_failures: '50%' }, undefined, ['a', 'b', 'c', 'd']);
  step(s, { type: 'start', at: T0, available: all });
  const wave1 = runWave(s, ['a', 'b'], T0, (n) => (n === 'a' ? 'failed' : 'succeeded'));
  t.equal(s.status, 'running', '1 failure of 2 that ran is within 50%');
  const next = step(s, { type: 'next_wave', at: wave1.at, due: wave1.at, available: new Set(['a', 'b', 'c', 'd']) });
  t.same(sent(next, 'commit'), ['c', 'd']);
});

t.test('an abort between waves skips the waves to come; during a wave it aborts that wave', async (t) => {
  const paused = rollout({ waves: [1], pause: 60 }, undefined, ['a', 'b', 'c']);
  step(paused, { type: 'start', at: T0, available: all });
  const wave1 = runWave(paused, ['a'], T0, () => 'succeeded');
  const abort = step(paused, { type: 'abort', at: wave1.at + 10_000 });
  t.equal(paused.status, 'aborted');
  t.same(jobNodesByStatus(paused), { succeeded: ['a'], skipped: ['b', 'c'] });
  t.same(sent(abort, 'abort'), [], 'nodes not asked yet are told nothing');
  t.same(
    paused.rollout?.waves.map((w) => w.status),
    ['complete', 'skipped', 'skipped'],
  );
  t.equal(paused.rollout?.next_wave_at, null);
  t.same(
    step(paused, { type: 'next_wave', at: wave1.at + 60_000, due: wave1.at + 60_000, available: all }).map(
      (e) => e.type,
    ),
    ['ignored'],
  );

  const running = rollout({ waves: [1] }, undefined, ['a', 'b', 'c']);
  step(running, { type: 'start', at: T0, available: all });
  step(running, { type: 'ack_commit', node: 'a', at: T0 + 1000 });
  const during = step(running, { type: 'abort', at: T0 + 2000 });
  t.same(sent(during, 'abort'), ['a'], 'the running wave is aborted on its nodes');
  t.same(jobNodesByStatus(running), { aborted: ['a'], skipped: ['b', 'c'] });
  t.same(
    running.rollout?.waves.map((w) => w.status),
    ['aborted', 'skipped', 'skipped'],
  );
});

t.test('quorum counts inside each wave; a wave that fails it ends the job', async (t) => {
  const s = rollout({ waves: [1, '100%'] }, '50%');
  step(s, { type: 'start', at: T0, available: all });
  const wave1 = runWave(s, ['a'], T0, () => 'succeeded');
  // Three of the five left are down when their wave starts: 2 of 5 cannot meet 50% (3).
  const next = step(s, { type: 'next_wave', at: wave1.at, due: wave1.at, available: new Set(['b', 'c']) });
  t.same(sent(next, 'commit'), ['b', 'c']);
  t.equal(s.quorum, 3, "the wave's quorum");
  step(s, { type: 'ack_commit', node: 'b', at: wave1.at + 1000 });
  const failed = step(s, { type: 'ack_commit', node: 'c', at: wave1.at + 2000 });
  t.equal(s.status, 'quorum_failed');
  t.same(jobNodesByStatus(s), { succeeded: ['a'], unavailable: ['d', 'e', 'f'], was_ready: ['b', 'c'] });
  t.same(waveNotes(failed), ['wave_end 2 quorum_failed (0 failures)', 'job_complete quorum_failed']);
});

t.test('a node in a later wave that goes down waits; its wave finds it unavailable', async (t) => {
  const s = rollout({ waves: [2, 1] }, '50%', ['a', 'b', 'c']);
  step(s, { type: 'start', at: T0, available: all });
  t.same(step(s, { type: 'node_down', node: 'c', at: T0 + 500 }), [], 'nothing moves, nothing is told');
  t.same(jobNodesByStatus(s), { new: ['a', 'b'], waiting: ['c'] });
  step(s, { type: 'ack_commit', node: 'a', at: T0 + 1000 });
  step(s, { type: 'voting_timeout', at: T0 + 60_000 });
  t.same(jobNodesByStatus(s), { ready: ['a'], unavailable: ['b'], waiting: ['c'] }, 'the timeout leaves c waiting');
  step(s, { type: 'succeeded', node: 'a', at: T0 + 61_000 });
  const next = step(s, { type: 'next_wave', at: T0 + 61_000, due: T0 + 61_000, available: new Set(['a', 'b']) });
  t.same(sent(next, 'commit'), [], 'c is not asked: it is down');
  t.same(jobNodesByStatus(s).unavailable, ['b', 'c']);
  t.equal(s.status, 'quorum_failed', 'its wave of one has nobody to run on');
});

t.test("a run timeout ends the job timed_out, and the waves after it don't start", async (t) => {
  const s = rollout({ waves: [1] }, undefined, ['a', 'b']);
  step(s, { type: 'start', at: T0, available: all });
  step(s, { type: 'ack_commit', node: 'a', at: T0 + 1000 });
  const deadline = s.run_deadline as number;
  step(s, { type: 'run_timeout', at: deadline });
  t.equal(s.status, 'timed_out');
  t.same(jobNodesByStatus(s), { timed_out: ['a'], skipped: ['b'] });
  t.same(
    s.rollout?.waves.map((w) => w.status),
    ['timed_out', 'skipped'],
  );
});

t.test('a job restored during a pause waits out the same pause', async (t) => {
  const s = rollout({ waves: [1], pause: 45 }, undefined, ['a', 'b']);
  step(s, { type: 'start', at: T0, available: all });
  const wave1 = runWave(s, ['a'], T0, () => 'succeeded');
  const copy = JSON.parse(JSON.stringify(s)) as JobState;
  const restored = step(copy, { type: 'restored', at: wave1.at + 5000, available: all });
  t.same(armed(restored), [`wave@${wave1.at - T0 + 45_000}`]);
  t.equal(copy.status, 'running');
});

t.test(
  'a rollout restored mid-wave goes on with that wave; one never started is crashed, its waves skipped',
  async (t) => {
    const s = rollout({ waves: [2] }, undefined, ['a', 'b', 'c', 'd']);
    step(s, { type: 'start', at: T0, available: all });
    step(s, { type: 'ack_commit', node: 'a', at: T0 + 1000 });
    const copy = JSON.parse(JSON.stringify(s)) as JobState;
    const restored = step(copy, { type: 'restored', at: T0 + 5000, available: all });
    t.same(armed(restored), [`voting@${60_000}`], "the wave's voting deadline, unchanged");
    t.same(jobNodesByStatus(copy), { ready: ['a'], new: ['b'], waiting: ['c', 'd'] });
    t.same(sent(restored, 'commit'), ['b'], 'the undecided node of the wave is asked again, no other');

    const unstarted = JSON.parse(JSON.stringify(rollout({ waves: [1] }, undefined, ['a', 'b']))) as JobState;
    step(unstarted, { type: 'restored', at: T0 + 5000, available: all });
    t.equal(unstarted.status, 'crashed');
    t.same(jobNodesByStatus(unstarted), { unavailable: ['a'], skipped: ['b'] });
    t.same(
      unstarted.rollout?.waves.map((w) => w.status),
      ['skipped', 'skipped'],
    );
  },
);

t.test("the job's JSON shows each wave's nodes and outcome, the current wave and the failures", async (t) => {
  const s = rollout({ waves: [1, 2, '100%'], max_failures: 1, pause: 30 });
  step(s, { type: 'start', at: T0, available: all });
  const wave1 = runWave(s, ['a'], T0, () => 'failed');
  const body = jobJson(s);
  t.same(
    body.rollout?.waves.map((w) => [w.wave, w.status, w.nodes, w.quorum]),
    [
      [1, 'complete', ['a'], 1],
      [2, 'pending', ['b', 'c'], 2],
      [3, 'pending', ['d', 'e', 'f'], 3],
    ],
  );
  t.same([body.rollout?.current_wave, body.rollout?.failures, body.rollout?.max_failures], [1, 1, 1]);
  t.equal(body.rollout?.next_wave_at, new Date(wave1.at + 30_000).toUTCString());
  t.equal(body.rollout?.waves[0]?.started_at, new Date(T0).toUTCString());
  t.equal(jobJson(rollout({ waves: [1] })).rollout?.current_wave, 0, 'before the start');
  t.notOk('rollout' in jobJson({ ...s, rollout: undefined }), 'a job without waves shows none');
});
