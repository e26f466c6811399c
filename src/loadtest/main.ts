// infra-loadtest from checked options to figures: the server (given or spawned), the fleet of simulated nodes
// in worker processes, the measured scenario, the figures, and cleaning up. Exit 0 when every job ended as
// expected, 1 otherwise or when the run could not be completed.
import { messageOf } from '../lib/thrown.js';
import { now } from './clock.js';
import { summaryText, type Figures } from './figures.js';
import { bringUp, castOf, fleetEvents, sharesOf } from './fleet-start.js';
import { Fleet } from './fleet.js';
import type { SpawnedServer } from './local-server.js';
import { FlapGate, measure } from './measured-run.js';
import type { LoadOptions } from './options.js';
import { Progress, type Streams } from './progress-line.js';
import { figuresOf } from './run-figures.js';
import { OfflineDetector, StopSignal } from './scenario.js';
import { serverUnderLoad } from './server-under-load.js';
import { stopOnSignals, watchdog, type Held } from './stopping.js';

export async function runLoadTest(o: LoadOptions, io: Streams): Promise<number> {
  const progress = new Progress(io.stderr);
  const stop = new StopSignal(now() + o.timeoutS * 1000);
  const held: Held = { servers: [], fleet: null };
  const cancelWatchdog = watchdog(o.timeoutS, io.stderr, held);
  const stopListening = stopOnSignals(stop);
  const errors: string[] = [];
  try {
    const server = await serverUnderLoad(o, stop, progress, held.servers);
    const cast = castOf(o);
    const shares = await sharesOf(o, server, cast);
    const detector = new OfflineDetector(server.api, o.org);
    const flaps = new FlapGate(detector);
    const fleet = new Fleet(fleetEvents(o, progress, cast, flaps.flap));
    held.fleet = fleet;
    const { provisionS, readyS } = await bringUp(fleet, shares, o, server, cast, stop, progress);
    const measured = await measure({ o, server, fleet, cast, detector, flaps, stop, progress });
    if (stop.over && !stop.stopped) errors.push(`--timeout of ${o.timeoutS} s passed before the run ended`);
    if (stop.stopped) errors.push('stopped by a signal');

    progress.say(o.cleanup ? 'stopping the nodes and deleting them' : 'stopping the nodes');
    held.fleet = null;
    const deleted = await fleet.stop(o.cleanup);
    const figures = figuresOf({
      o,
      fleet,
      measured,
      detector,
      pid: server.pid,
      provisionS,
      readyS,
      deleted,
      errors: [...errors, ...fleet.totals.errors],
    });
    logMismatches(figures, held.servers[0], io.stderr);
    progress.end();
    io.stdout.write(`${summaryText(figures)}\n`);
    if (o.json) io.stdout.write(`${JSON.stringify(figures)}\n`);
    const q = figures.quorum_outcomes_correct;
    return q.correct === q.total && errors.length === 0 ? 0 : 1;
  } catch (e) {
    progress.end();
    io.stderr.write(`infra-loadtest: ${messageOf(e)}\n`);
    // Scripts read the last line: it still says what happened.
    if (o.json) io.stdout.write(`${JSON.stringify({ nodes: o.nodes, errors: [...errors, messageOf(e)] })}\n`);
    held.fleet?.kill();
    return 1;
  } finally {
    cancelWatchdog();
    stopListening();
    await Promise.all(held.servers.map((s) => s.stop()));
  }
}

/** What the spawned server logged of each job that ended otherwise than expected, to tell why. */
function logMismatches(figures: Figures, first: SpawnedServer | undefined, stderr: NodeJS.WritableStream): void {
  if (first === undefined) return;
  for (const m of figures.quorum_outcomes_correct.mismatches) {
    const lines = first.output().filter((l) => l.includes(m.job));
    stderr.write(`server log lines naming job ${m.job}:\n${lines.slice(0, 40).join('\n')}\n`);
  }
}
