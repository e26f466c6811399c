// `cli job start --waves 1,10%,100% --max-failures 2 --pause 30`: the job body's rollout (src/api/rollout.ts),
// checked here so that a typo is a usage error naming the option rather than a 400 from the server.
import type { JobStartBody } from '../api/push-jobs.js';
import { CommandError } from './terminal.js';

type Rollout = NonNullable<JobStartBody['rollout']>;

/** A count (at least `least`) or a percentage (above 0, or from 0 when `least` is 0, to 100). */
function countOrPercent(option: string, text: string, least: number): number | string {
  const m = /^(\d+(?:\.\d+)?)(%?)$/.exec(text.trim());
  const value = Number(m?.[1]);
  const percent = m?.[2] === '%';
  const ok =
    m !== null &&
    (percent ? value <= 100 && (least === 0 ? value >= 0 : value > 0) : Number.isSafeInteger(value) && value >= least);
  if (!ok) {
    const range = least === 0 ? 'from 0% to 100%' : 'above 0% up to 100%';
    throw CommandError.usage(`${option}: '${text}' is not a node count or a percentage ${range}`);
  }
  return percent ? `${value}%` : value;
}

/** The rollout the options ask for, or undefined without --waves. */
export function parseRollout(
  waves: string | undefined,
  maxFailures: string | undefined,
  pause: string | undefined,
): Rollout | undefined {
  if (waves === undefined) {
    if (maxFailures !== undefined || pause !== undefined)
      throw CommandError.usage('--max-failures and --pause apply to a rollout: give its --waves too');
    return undefined;
  }
  const rollout: Rollout = { waves: waves.split(',').map((size) => countOrPercent('--waves', size, 1)) };
  if (maxFailures !== undefined) rollout.max_failures = countOrPercent('--max-failures', maxFailures, 0);
  if (pause !== undefined) {
    const seconds = Number(pause);
    if (!/^\d+$/.test(pause.trim()) || !Number.isSafeInteger(seconds))
      throw CommandError.usage(`--pause: '${pause}' is not a whole number of seconds`);
    rollout.pause = seconds;
  }
  return rollout;
}
