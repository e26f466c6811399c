// The time between a rollout's waves, from what its nodes saw: a wave's last result to the next wave's first commit,
// over every job of a run; tallies from several workers add up first.
import t from 'tap';
import type { JobBody } from '../../src/api/push-jobs.js';
import type { JobTally } from '../../src/loadtest/ipc.js';
import type { JobRecord } from '../../src/loadtest/scenario.js';
import { emptyTally, mergeTally, waveTallyOf } from '../../src/loadtest/tally.js';
import { betweenWaves, waveGaps } from '../../src/loadtest/wave-figures.js';

/** A tally whose waves each ran `runs` nodes: committed at `[commit]`, last result at `[result]` (ms). */
function tally(waves: Array<{ commit: number; result: number; runs?: number; reported?: number }>): JobTally {
  const t = emptyTally();
  waves.forEach((w, i) => {
    const wave = waveTallyOf(t, i + 1);
    wave.firstCommitAt = w.commit;
    wave.runs = w.runs ?? 3;
    wave.reported = w.reported ?? wave.runs;
    wave.lastResultAt = w.result;
  });
  return t;
}

function record(id: string, statuses: string[]): JobRecord {
  const waves = statuses.map((status, i) => ({
    wave: i + 1,
    status,
    nodes: [],
    quorum: 1,
    started_at: null,
    ended_at: null,
  }));
  return {
    id,
    postedAt: 0,
    finishedAt: null,
    final: { rollout: { waves } } as unknown as JobBody,
    expectation: { statuses: ['complete'], quorum: 1, readyMin: 3, readyMax: 3 },
    error: null,
  };
}

t.test('each wave to the next: its last result to the next first commit', async (t) => {
  const gaps = waveGaps(
    tally([
      { commit: 1000, result: 1200 },
      { commit: 1230, result: 1400 },
      { commit: 3450, result: 3600 },
    ]),
  );
  t.same(gaps, [30, 2050], 'the pause is in the gap, not taken off');
});

t.test('a wave whose every node did not report, or a next wave never asked, gives no gap', async (t) => {
  const crashed = tally([
    { commit: 1000, result: 1200, runs: 3, reported: 2 },
    { commit: 1900, result: 2100 },
    { commit: 2120, result: 2300 },
  ]);
  t.same(waveGaps(crashed), [20], 'a crash ends its run when the server hears of it, which no node tells');
  const halted = tally([{ commit: 1000, result: 1200 }]);
  waveTallyOf(halted, 2);
  t.same(waveGaps(halted), [], 'the next wave sent no commit');
  t.same(waveGaps(emptyTally()), [], 'a job not in waves');
});

t.test("workers' tallies of one wave add up before the gap is taken", async (t) => {
  const a = tally([
    { commit: 1000, result: 1150, runs: 2 },
    { commit: 1300, result: 1500, runs: 1 },
  ]);
  const b = tally([
    { commit: 1010, result: 1250, runs: 1 },
    { commit: 1270, result: 1480, runs: 2 },
  ]);
  const whole = emptyTally();
  mergeTally(whole, a);
  mergeTally(whole, b);
  t.same(whole.waves[1], { firstCommitAt: 1000, runs: 3, reported: 3, lastResultAt: 1250 });
  t.same(waveGaps(whole), [20], 'from the latest result of the wave to the earliest commit of the next');
});

t.test('over the run: p50 and max of every gap, the waves complete and the pause', async (t) => {
  const tallies = new Map([
    [
      'j1',
      tally([
        { commit: 0, result: 100 },
        { commit: 140, result: 200 },
        { commit: 210, result: 300 },
      ]),
    ],
    [
      'j2',
      tally([
        { commit: 0, result: 100 },
        { commit: 125, result: 200 },
      ]),
    ],
  ]);
  const records = [
    record('j1', ['complete', 'complete', 'complete']),
    record('j2', ['complete', 'complete']),
    { ...record('j3', []), id: null, final: null },
  ];
  t.same(betweenWaves(records, tallies, { waves: ['10%'], pause: 0 }), {
    p50: 25,
    max: 40,
    gaps: 3,
    waves_complete: 5,
    pause_s: 0,
  });
  t.same(betweenWaves([], new Map(), { waves: [1] }), { p50: null, max: null, gaps: 0, waves_complete: 0, pause_s: 0 });
  t.equal(betweenWaves(records, tallies, null), null, 'no figure without --waves');
});
