// A rollout's moves in the job machine (job-machine.ts): a wave starts, a wave ends, and the job's end closes the
// waves. Each wave votes and runs as a whole job does; between two, the job stays `running` and pauses, and a wave
// starts only in a step of its own (the `wave` timer), on the nodes available then.
import type { WaveStatus } from '../../src/api/rollout.js';
import type { JobStatus, RolloutState } from './job-model.js';
import { apply, setStatus, type Draft } from './job-draft.js';
import { WAVES } from './job-tables.js';
import { budgetSpent, failuresOf } from './rollout-plan.js';

/** How the wave running as the job ends ends with it. */
const WAVE_END: Partial<Record<JobStatus, WaveStatus>> = {
  complete: 'complete',
  quorum_failed: 'quorum_failed',
  timed_out: 'timed_out',
  aborted: 'aborted',
  crashed: 'crashed',
};

/** The job-level status changes, and with it the rollout's current wave (running, or ended with the job). */
export function enter(d: Draft, status: JobStatus): void {
  const r = d.state.rollout;
  if (r) {
    const wave = r.waves[r.current - 1];
    if (status === 'running' && wave?.status === 'voting') wave.status = 'running';
    const ends = WAVE_END[status];
    if (ends !== undefined || status === 'max_failures_exceeded') {
      if (ends !== undefined) endWave(d, r, ends);
      r.next_wave_at = null;
      for (const w of r.waves) if (w.status === 'pending') w.status = 'skipped';
    }
  }
  setStatus(d, status);
}

/** The next wave starts voting, taking `nodes`: its quorum is the job's now. */
export function startWave(d: Draft, r: RolloutState, nodes: number): void {
  const wave = r.waves[r.current] as RolloutState['waves'][number];
  r.current += 1;
  Object.assign(wave, { status: 'voting', started_at: d.event.at });
  d.state.quorum = wave.quorum;
  d.jobChanged = true;
  d.notes.push({ event: 'wave_start', data: { wave: r.current, nodes, quorum: wave.quorum } });
}

/**
 * Every node asked has ended: the job is complete, or a rollout's wave is. A rollout then halts once failures passed
 * its budget, or pauses before its next wave (armed even for no pause, so each wave's start is a step of its own).
 */
export function ran(d: Draft): void {
  const s = d.state;
  const r = s.rollout;
  if (!r || s.counts.waiting === 0) {
    enter(d, 'complete');
    return;
  }
  endWave(d, r, 'complete');
  const { failures, ran: done } = failuresOf(s.counts);
  if (budgetSpent(r.max_failures, failures, done)) {
    for (const node in s.nodes) if (s.nodes[node] === 'waiting') apply(d, node, WAVES.halt.waiting);
    enter(d, 'max_failures_exceeded');
    return;
  }
  if (s.status !== 'running') enter(d, 'running');
  r.next_wave_at = d.event.at + r.pause * 1000;
  d.jobChanged = true; // the pause is stored: a restart arms it again
  d.arm = { type: 'arm', timer: 'wave', at: r.next_wave_at };
}

/** The rollout's current wave ends with `status` (once: a wave that ended stays as it ended). */
function endWave(d: Draft, r: RolloutState, status: WaveStatus): void {
  const wave = r.waves[r.current - 1];
  if (wave === undefined || (wave.status !== 'voting' && wave.status !== 'running')) return;
  Object.assign(wave, { status, ended_at: d.event.at });
  d.jobChanged = true;
  const { failures } = failuresOf(d.state.counts);
  d.notes.push({ event: 'wave_end', data: { wave: r.current, status, failures } });
}
