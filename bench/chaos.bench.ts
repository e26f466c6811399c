// A Jepsen-style run against a cluster in use: rounds of a long job over real push-jobs-client nodes, a fault of the
// seeded schedule struck during each (kill -9 or SIGSTOP of a member, a Redis restart or failover) and healed, then a
// short job right after; the checker then reads the history from both sides, the server's answers and each node's
// own log (test/support/chaos/). The settings are as users run a cluster (lease_ttl 5, heartbeat_interval 1000).
// INFRA_BENCH_CHAOS_SEED (default random, printed: the same seed replays the same faults), _ROUNDS (30),
// _MEMBERS (3), _NODES (6), _REDIS (single | sentinel | cluster), _BALANCER (1; 0: each node names one member),
// _KINDS (kill,pause and the Redis kind's own fault), _DURATIONS (`kill:10000,pause:3000-20000`, in ms),
// _OFFSET (`2000` or `500-3000`: from the long job's start to the fault), _LEASE_TTL (5), _HEARTBEAT_MS (1000),
// _LOG_LEVEL (the members' and clients' logs: info, or debug to follow each message), _KEEP (a folder the history,
// the members' and the clients' logs are copied to), _SIMULATED (a count: that many simulated nodes of
// infra-loadtest, with --record, instead of real clients; every job's command runs 8 s).
// The simulated nodes keep no replay guard across their connections, so only real clients show its drops.
import { randomInt } from 'node:crypto';
import { cp } from 'node:fs/promises';
import { REDIS_KINDS, type RedisKind } from '../test/support/chaos/history.js';
import { parseDurations, parseKinds, type FaultKind, type MsRange } from '../test/support/chaos/nemesis.js';
import { backLine } from '../test/support/chaos/report.js';
import { runChaos } from '../test/support/chaos/runner.js';
import { INVARIANTS } from '../test/support/chaos/checker.js';
import { report, runInTempDir, scope } from './support.js';

const env = (name: string) => process.env[`INFRA_BENCH_CHAOS_${name}`];
const SEED = Number(env('SEED') ?? randomInt(2 ** 31));
const ROUNDS = Number(env('ROUNDS') ?? 30);
const MEMBERS = Number(env('MEMBERS') ?? 3);
const SIMULATED = env('SIMULATED') === undefined ? null : Number(env('SIMULATED'));
const NODES = SIMULATED ?? Number(env('NODES') ?? 6);
const REDIS = (env('REDIS') ?? 'single') as RedisKind;
if (!REDIS_KINDS.includes(REDIS)) throw new Error(`INFRA_BENCH_CHAOS_REDIS must be one of ${REDIS_KINDS.join(', ')}`);
const OWN_FAULT: Record<RedisKind, FaultKind> = {
  single: 'redis_restart',
  sentinel: 'sentinel_failover',
  cluster: 'cluster_failover',
};
const KINDS = parseKinds(env('KINDS') ?? `kill,pause,${OWN_FAULT[REDIS]}`);
const BALANCER = env('BALANCER') !== '0';
const LEASE_TTL_S = Number(env('LEASE_TTL') ?? 5);
const HEARTBEAT_MS = Number(env('HEARTBEAT_MS') ?? 1000);
const LOG_LEVEL = env('LOG_LEVEL');
if (LOG_LEVEL !== undefined && LOG_LEVEL !== 'debug' && LOG_LEVEL !== 'info')
  throw new Error('INFRA_BENCH_CHAOS_LOG_LEVEL is debug or info');

function offset(): MsRange | undefined {
  const text = env('OFFSET');
  if (text === undefined) return undefined;
  const m = /^(\d+)(?:-(\d+))?$/.exec(text);
  if (m === null) throw new Error('INFRA_BENCH_CHAOS_OFFSET is MS or MIN-MAX');
  return { min: Number(m[1]), max: Number(m[2] ?? m[1]) };
}

runInTempDir('infra-bench-chaos-', async (dir) => {
  console.log(`seed ${SEED}`);
  const result = await runChaos(scope, {
    seed: SEED,
    rounds: ROUNDS,
    members: MEMBERS,
    nodes: NODES,
    redis: REDIS,
    balancer: BALANCER,
    kinds: KINDS,
    durations: parseDurations(env('DURATIONS') ?? ''),
    offset: offset(),
    leaseTtlS: LEASE_TTL_S,
    heartbeatMs: HEARTBEAT_MS,
    ...(LOG_LEVEL === undefined ? {} : { logLevel: LOG_LEVEL }),
    // The long job outlives the voting and spans the fault's start; run_timeout leaves it room to finish after it.
    long: { commandLine: 'sleep 8', runTimeoutS: 30, votingTimeoutS: 10 },
    short: { commandLine: 'echo chaos', runTimeoutS: 20, votingTimeoutS: 10 },
    ...(SIMULATED === null ? {} : { simulated: { runMs: 8000 } }),
    dir,
    log: (line) => console.log(line),
  });
  console.log(`\n${result.report}\n`);
  const keep = env('KEEP');
  if (keep !== undefined) {
    await cp(dir, keep, { recursive: true });
    console.log(`history, members' and clients' logs copied to ${keep}`);
  }

  const { rounds, violations, notes } = result;
  const allSucceeded = rounds.filter((r) => {
    const last = r.long.view?.last;
    return last?.status === 'complete' && last.nodes.succeeded?.length === NODES;
  }).length;
  const shortComplete = rounds.filter((r) => r.short.view?.last?.status === 'complete').length;
  const fleet = SIMULATED === null ? `${NODES} real clients` : `${NODES} simulated nodes`;
  const setup = `${MEMBERS} members, ${fleet}, Redis ${REDIS}, ${BALANCER ? 'balancer' : 'no balancer'}, ${KINDS.join('/')}; the machine shared by all of them`;
  const seedText = `seed ${SEED}`;
  report(`long jobs complete with every node succeeded (${seedText})`, `${allSucceeded} of ${ROUNDS}`, { setup });
  report(`jobs started right after recovery that complete (${seedText})`, `${shortComplete} of ${ROUNDS}`, { setup });
  report(`nodes not available at the end (${seedText})`, notes.stuck.length === 0 ? 'none' : notes.stuck.join(', '), {
    setup,
  });
  report(`nodes away when a fault was healed, and the slowest back (${seedText})`, backLine(notes.back), { setup });
  const byName = INVARIANTS.map((i) => `${i} ${violations.filter((v) => v.invariant === i).length}`).join(', ');
  report(`violations by invariant (${seedText})`, byName, { setup });
});
