// The measured part of a run: the window opened, the scenario played (--jobs jobs, or heartbeats alone for
// --seconds) with the loops of signed GETs and the offline detection of flapping nodes beside it, and the window
// closed once every node has beaten in it.
import { delay, type Timers } from '../lib/timers.js';
import { testerTimers } from './clock.js';
import { CompletionFeed } from './completions.js';
import type { Cast } from './fleet-start.js';
import type { Fleet } from './fleet.js';
import { round } from './figures.js';
import { closeWindow, openWindow, type WindowClosed, type WindowOpened } from './measured-window.js';
import type { LoadOptions } from './options.js';
import type { Progress } from './progress-line.js';
import {
  restLoop,
  runJobs,
  type JobRecord,
  type OfflineDetector,
  type RestFigures,
  type StopSignal,
} from './scenario.js';
import type { ServerUnderLoad } from './server-under-load.js';
import { until } from './stopping.js';

/** How often the live line shows how far the scenario got. */
const PROGRESS_MS = 250;

/** Flapping nodes are timed only inside the measured window: the detector hears of them while it is open. */
export class FlapGate {
  open = false;
  constructor(private readonly detector: OfflineDetector) {}
  readonly flap = (node: string, kind: 'stop' | 'resume', at: number, due: number): void => {
    if (!this.open) return;
    if (kind === 'stop') this.detector.silent(node, at, due);
    else this.detector.resumed(node);
  };
}

export interface MeasureContext {
  o: LoadOptions;
  server: ServerUnderLoad;
  fleet: Fleet;
  cast: Cast;
  detector: OfflineDetector;
  flaps: FlapGate;
  stop: StopSignal;
  progress: Progress;
}

export interface Measured {
  opened: WindowOpened;
  closed: WindowClosed;
  records: JobRecord[];
  rest: RestFigures;
}

export async function measure(x: MeasureContext, timers: Timers = testerTimers): Promise<Measured> {
  const { o, server, fleet, stop } = x;
  const opened = await openWindow(o, server, fleet, timers);
  x.flaps.open = true;
  fleet.begin();
  const live = new Set<string>();
  let scenarioDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (scenarioDone = resolve));
  const rest = restLoop(server.api, o.org, o.restConcurrency, live, stop, done, timers);
  const watching = x.detector.watch(stop, done);
  const records = await play(x, opened.at, live, scenarioDone, timers);
  const closed = await closeWindow(o, server, fleet, opened, stop, timers);
  const restFigures = await rest;
  await watching;
  x.flaps.open = false;
  return { opened, closed, records, rest: restFigures };
}

/** The scenario, with the live line; `done` tells the loops beside it once it is over, however it ends. */
async function play(
  x: MeasureContext,
  openedAt: number,
  live: Set<string>,
  done: () => void,
  timers: Timers,
): Promise<JobRecord[]> {
  const { o, server, fleet, cast, stop, progress } = x;
  let finishedJobs = 0;
  let records: JobRecord[] = [];
  let completions: CompletionFeed | undefined;
  const stopTicker = timers.every(PROGRESS_MS, () => {
    const secs = round((timers.now() - openedAt) / 1000);
    progress.set(
      o.heartbeatOnly
        ? `heartbeats: ${secs}/${o.seconds} s, ${fleet.totals.heartbeatsSent} sent`
        : `jobs: ${finishedJobs}/${o.jobs} finished, ${live.size} in flight, ${secs} s`,
    );
  });
  try {
    if (o.heartbeatOnly) {
      await Promise.race([delay(timers, o.seconds * 1000), until(stop, timers), fleet.failure$]);
    } else {
      progress.say(`running ${o.jobs} jobs of ${o.jobNodes} nodes, ${o.concurrency} at a time`);
      completions = await CompletionFeed.open(server.api, o.org);
      if (!completions.live) progress.say('the server does not serve the job feed: jobs are polled');
      records = await Promise.race([
        runJobs({
          api: server.api,
          org: o.org,
          options: o,
          names: cast.names,
          behaviours: cast.behaviours,
          uncertain: cast.uncertain,
          stop,
          live,
          completions,
          onFinished: () => (finishedJobs += 1),
          timers,
        }),
        fleet.failure$,
      ]);
    }
  } finally {
    stopTicker();
    completions?.close();
    done();
  }
  return records;
}
