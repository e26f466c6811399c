// One no-op job over a whole fleet, against its floor measured in the same run by the same nodes: how much the job
// path (the POST, the job actor's votes and quorum, the node followers, the saves, the feed that tells of the end)
// costs above the messages it cannot do without. The floor is bare ZeroMQ routers in one process
// (heartbeat-play.ts startFloor, CurveZMQ on): a signed `commit` to every node, every `ack_commit` read and
// verified, then a signed `run` to every node and every `ack_run` and `succeeded` read and verified, and nothing
// else. The server is the whole product in a process of its own, compiled, on its file store; the job is posted by
// a signed request and is over when the organization's feed says so, as infra-loadtest sees it. Both are played by
// heartbeat-flood.ts in child processes: nodes heartbeating every 10 s (the original's interval), 50 to a
// connection pair as in the fleet-scale runs (the environment variables below play the defaults instead), that
// answer aborts, ack commits and succeed at once. Each side runs
// three jobs one after another (the first also pays for V8 compiling its path) and gives the median: the wall time
// from the first commit sent (floor) or the POST (server) to the last result taken in, and the measured process's
// CPU in that time; the server's ratios are to the floor of the same round. With INFRA_BENCH_CPU_PROF_DIR set,
// each side writes a CPU profile of its jobs alone there (`ROLE-PID.cpuprofile`, for Chrome's DevTools).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../src/auth/api-client.js';
import { CompletionFeed } from '../src/loadtest/completions.js';
import { startServer } from '../src/server.js';
import { benchConfig, childOrMain, measureInChild, play, serverLoad, startFloor, type Load } from './heartbeat-play.js';
import { until } from '../test/support/deadline.js';
import { median, report, SHARED } from './support.js';

const NODES = Number(process.env.INFRA_BENCH_NODES ?? 10_000);
const ROUNDS = Number(process.env.INFRA_BENCH_ROUNDS ?? 3);
/** The fleet-scale runs' settings by default; `INFRA_BENCH_NODES_PER_CONNECTION=1 INFRA_BENCH_INTERVAL_MS=1000` plays
 * the defaults real clients run (a pair each, 1 s heartbeat). */
const NODES_PER_CONNECTION = Number(process.env.INFRA_BENCH_NODES_PER_CONNECTION ?? 50);
const INTERVAL_MS = Number(process.env.INFRA_BENCH_INTERVAL_MS ?? 10_000);
/** Longer than any round: the play is stopped once the job is over. */
const PLAY_SECONDS = 300;
const READY_TIMEOUT_MS = 120_000;
const JOBS = 3;

interface Figure {
  ms: number;
  cpuMs: number;
}

/** Polls `check` until it holds (every 200 ms: each poll of the server is a GET of every node's state). */
const ready = (what: string, check: () => Promise<boolean> | boolean): Promise<true> =>
  until(what, async () => ((await check()) ? true : undefined), READY_TIMEOUT_MS, 200);

/** A player's dealer pairs at most: each socket holds two open files (its connection and its mailbox), and a process
 * may open 20,000. */
const PAIRS_PER_PLAYER = 4000;

/** Plays the nodes, with jobs answered, until `stop` is aborted: in as many player processes as their pairs need. */
async function playNodes(load: Load, stop: AbortSignal): Promise<number> {
  const dealers = Math.ceil(NODES / NODES_PER_CONNECTION);
  const players = Math.ceil(dealers / PAIRS_PER_PLAYER);
  const played = Array.from({ length: players }, (_, p) =>
    play(
      { ...load, nodes: load.nodes.filter((_, i) => i % players === p) },
      { dealers: Math.ceil(dealers / players), seconds: PLAY_SECONDS, rate: 1000 / INTERVAL_MS, jobs: true },
      stop,
    ),
  );
  return (await Promise.all(played)).reduce((a, b) => a + b, 0);
}

/**
 * Runs `job` JOBS times; the median wall time and the median CPU of this process (user and system, every thread:
 * libzmq's I/O threads too) spent in one.
 */
async function timed(job: () => Promise<void>): Promise<Figure> {
  const profile = await profiling();
  const ms: number[] = [];
  const cpuMs: number[] = [];
  for (let i = 0; i < JOBS; i++) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    await job();
    ms.push(performance.now() - start);
    const used = process.cpuUsage(cpu);
    cpuMs.push((used.user + used.system) / 1000);
  }
  await profile();
  const mid = (xs: number[]) => median(xs.sort((a, b) => a - b));
  return { ms: mid(ms), cpuMs: mid(cpuMs) };
}

/** Starts V8's sampling profiler when INFRA_BENCH_CPU_PROF_DIR asks for it; the function returned writes it. */
async function profiling(): Promise<() => Promise<void>> {
  const dir = process.env.INFRA_BENCH_CPU_PROF_DIR;
  if (dir === undefined) return async () => undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(join(dir, `${process.argv[2] ?? 'main'}-${process.pid}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}

async function floor(): Promise<Figure> {
  const f = await startFloor(NODES, INTERVAL_MS, { command: true, rehab: true });
  const stop = new AbortController();
  const playing = playNodes(f.load, stop.signal);
  try {
    await ready('every node to answer its abort', () => f.answers() >= NODES);
    return await timed(() => f.job());
  } finally {
    stop.abort();
    await playing;
    await f.stop();
  }
}

async function server(): Promise<Figure> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-bench-job-'));
  const s = await startServer(benchConfig(dir, INTERVAL_MS));
  const stop = new AbortController();
  try {
    const load = await serverLoad(s, NODES);
    const playing = playNodes(load, stop.signal);
    const admin = new ApiClient({
      baseUrl: s.url,
      userId: 'admin',
      key: await readFile(join(dir, 'admin.pem'), 'utf8'),
    });
    const org = '/organizations/default/pushy';
    const available = async () => {
      const res = await admin.request('GET', `${org}/node_states`);
      const rows = Array.isArray(res.body) ? (res.body as Array<{ availability?: string }>) : [];
      return rows.filter((r) => r.availability === 'available').length >= NODES;
    };
    await ready('every node to be available', available);
    const feed = await CompletionFeed.open(admin, 'default');
    if (!feed.live) throw new Error('the server does not serve the job feed');
    const ids: string[] = [];
    const figure = await timed(async () => {
      const res = await admin.request('POST', `${org}/jobs`, { command: 'noop', nodes: load.nodes.map((n) => n.name) });
      const body = res.body as { id?: string };
      if (res.status !== 201 || typeof body.id !== 'string') throw new Error(`POST job: ${res.status}`);
      ids.push(body.id);
      await feed.finishedAt(body.id);
    });
    feed.close();
    for (const id of ids) {
      const job = (await admin.request('GET', `${org}/jobs/${id}`)).body as {
        status?: string;
        nodes?: Record<string, string[]>;
      };
      const succeeded = job.nodes?.succeeded?.length ?? 0;
      if (job.status !== 'complete' || succeeded !== NODES) {
        throw new Error(`job ${id} ended ${job.status} with ${succeeded} of ${NODES} nodes succeeded`);
      }
    }
    stop.abort();
    await playing;
    return figure;
  } finally {
    stop.abort();
    await s.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  }
}

type Role = 'floor' | 'server';
const ROLES: readonly Role[] = ['floor', 'server'];

/** Each side runs compiled, as heartbeat-cpu.bench.ts says why. */
function measure(which: Role): Promise<Figure> {
  return measureInChild<Figure>('job-floor.bench', which);
}

async function main(): Promise<void> {
  const rows: string[] = [];
  const wall: number[] = [];
  const cpu: number[] = [];
  const serverMs: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const f = await measure('floor');
    const s = await measure('server');
    serverMs.push(s.ms);
    wall.push(s.ms / f.ms);
    cpu.push(s.cpuMs / f.cpuMs);
    rows.push(
      `| ${round} | ${f.ms.toFixed(0)} | ${f.cpuMs.toFixed(0)} | ${s.ms.toFixed(0)} | ${s.cpuMs.toFixed(0)} ` +
        `| ${(s.ms / f.ms).toFixed(2)} | ${(s.cpuMs / f.cpuMs).toFixed(2)} |`,
    );
  }
  console.log(
    `${JOBS} no-op jobs one after another over ${NODES} nodes (medians), ${NODES_PER_CONNECTION} to a connection pair, heartbeats every ` +
      `${INTERVAL_MS} ms, CurveZMQ on; the server on its file store\n`,
  );
  console.log(
    '| round | floor: first commit to last result ms | floor: CPU ms | server: POST to complete ms ' +
      '| server: CPU ms | wall ratio | CPU ratio |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
  const mid = (xs: number[]) => median([...xs].sort((a, b) => a - b)).toFixed(2);
  console.log(`\nmedian wall ratio ${mid(wall)}, median CPU ratio ${mid(cpu)}`);
  report(
    `${NODES} nodes, ${NODES_PER_CONNECTION} a connection, ${INTERVAL_MS / 1000} s heartbeat: one job, POST to complete`,
    `${mid(serverMs)} ms (median of ${ROUNDS} rounds)`,
    { ratio: `${mid(wall)} × the floor's wall, ${mid(cpu)} × its CPU`, setup: SHARED },
  );
}

childOrMain(ROLES, (which) => (which === 'server' ? server() : floor()), main);
