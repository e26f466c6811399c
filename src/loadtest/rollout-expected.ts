// The outcome a job in waves must have (--waves, --max-failures): each wave makes its own quorum as a job would
// (expected.ts), and failures are held against the budget after each wave but the last, as the server does
// (actors/push/job-waves.ts).
import type { FailureBudget } from '../api/rollout.js';
import type { JobStatus } from '../push/job-states.js';
import { expectOutcome, type ExpectOptions, type Expectation, type JobNode } from './expected.js';
import { percentOf, waveSizes, type Rollout } from './rollout.js';

/** Nodes of the waves so far that may run, and of those, that may fail, at fewest and at most. */
interface Ran {
  failedMin: number;
  failedMax: number;
  succeededMin: number;
  succeededMax: number;
}

/** Whether failures pass the budget surely, maybe, or never, as the server checks after each wave but the last. */
function budget(b: FailureBudget | null, r: Ran): 'surely' | 'maybe' | 'never' {
  if (b === null) return 'never';
  const spent = (failures: number, succeeded: number) =>
    typeof b === 'number' ? failures > b : failures * 100 > percentOf(b) * (failures + succeeded);
  if (spent(r.failedMin, r.succeededMax)) return 'surely';
  return spent(r.failedMax, r.succeededMin) ? 'maybe' : 'never';
}

/**
 * What a completed wave's ready nodes add to the runs so far; nodes that fail or crash count as failures. Surely
 * ready are the certain ackers when the wave's readyMin counts them, maybe ready every acker when its readyMax does.
 */
function addRuns(r: Ran, wave: readonly JobNode[], e: Expectation): void {
  const fails = (n: JobNode) => n.behaviour.run !== 'succeed';
  const maybe = e.readyMax > 0 ? wave.filter((n) => n.behaviour.vote === 'ack') : [];
  const surely = e.readyMin > 0 ? maybe.filter((n) => !n.uncertain) : [];
  const surelyFailing = surely.filter(fails).length;
  const maybeFailing = maybe.filter(fails).length;
  r.failedMin += surelyFailing;
  r.failedMax += maybeFailing;
  r.succeededMin += surely.length - surelyFailing;
  r.succeededMax += maybe.length - maybeFailing;
}

/**
 * The outcome of a job in waves (`nodes` in the order of their names): each wave must make its own quorum as a job
 * would, and the job ends with the first wave that does not complete, once failures pass --max-failures after a
 * wave but the last, or complete after the last. Any status some wave may end with is a correct outcome.
 */
export function expectRollout(
  nodes: readonly JobNode[],
  rollout: Rollout,
  quorumOf: (waveSize: number) => number,
  o: ExpectOptions,
): Expectation {
  const sizes = waveSizes(rollout.waves, nodes.length);
  const statuses = new Set<JobStatus>();
  const ran: Ran = { failedMin: 0, failedMax: 0, succeededMin: 0, succeededMax: 0 };
  let readyMin = 0;
  let readyMax = 0;
  let from = 0;
  for (const [i, size] of sizes.entries()) {
    const wave = nodes.slice(from, (from += size));
    const e = expectOutcome(wave, quorumOf(size), o);
    readyMin += e.readyMin;
    readyMax += e.readyMax;
    for (const s of e.statuses) if (s !== 'complete' || i === sizes.length - 1) statuses.add(s);
    if (!e.statuses.includes('complete')) break;
    addRuns(ran, wave, e);
    const spent = i === sizes.length - 1 ? 'never' : budget(rollout.max_failures ?? null, ran);
    if (spent !== 'never') statuses.add('max_failures_exceeded');
    if (spent === 'surely') break;
  }
  return { statuses: [...statuses], quorum: quorumOf(sizes[0] ?? 0), readyMin, readyMax };
}
