// How a run stops: at --timeout or on SIGINT or SIGTERM, through the StopSignal every phase reads, and by force
// when it is still running WATCHDOG_GRACE_MS past --timeout (a hung server or worker), with whatever it holds.
import { delay, type Timers } from '../lib/timers.js';
import { testerTimers } from './clock.js';
import type { Fleet } from './fleet.js';
import type { SpawnedServer } from './local-server.js';
import type { StopSignal } from './scenario.js';

/** Beyond --timeout, the run is ended by force (a hung server or worker). */
const WATCHDOG_GRACE_MS = 60_000;
/** What the servers are given to stop once the watchdog fired, before the tester exits anyway. */
const FORCED_EXIT_MS = 2000;
/** How often `until` looks at the stop signal. */
const STOP_POLL_MS = 100;

/** What a run holds while it runs: the processes to end should it fail or hang. */
export interface Held {
  /** The spawned server processes, the first (which set the store up) first. */
  servers: SpawnedServer[];
  /** The worker processes, until they are asked to stop. */
  fleet: Fleet | null;
}

/** Ends the run by force past --timeout and its grace; answers what cancels it, called once the run ends. */
export function watchdog(
  timeoutS: number,
  stderr: NodeJS.WritableStream,
  held: Held,
  timers: Timers = testerTimers,
): () => void {
  return timers.after(
    timeoutS * 1000 + WATCHDOG_GRACE_MS,
    () => {
      stderr.write(`infra-loadtest: still running ${WATCHDOG_GRACE_MS / 1000} s past --timeout: stopping by force\n`);
      held.fleet?.kill();
      for (const server of held.servers) void server.stop();
      timers.after(FORCED_EXIT_MS, () => process.exit(1));
    },
    { unref: true },
  );
}

/** A signal stops the run as its deadline would; answers the function that stops listening. */
export function stopOnSignals(stop: StopSignal): () => void {
  const onSignal = () => (stop.stopped = true);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}

/** Resolves once `stop` is over (deadline or signal). */
export async function until(stop: StopSignal, timers: Timers = testerTimers): Promise<void> {
  while (!stop.over) await delay(timers, STOP_POLL_MS);
}
