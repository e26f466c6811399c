// infra-loadtest's command line: the options with their help lines, each value checked by a zod schema, and the
// checks that involve several options. A wrong value is refused with a message naming its option.
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { principalNameSchema, splitServerUrl } from '../config/client-config.js';
import { parseOptions } from '../cli/command-line.js';
import { str, type OptionSpec, type Values } from '../cli/framework.js';
import { optionLines } from '../cli/help.js';
import { parseRollout } from '../cli/rollout-options.js';
import { messageOf } from '../lib/thrown.js';
import { waveSizes, type Rollout } from './rollout.js';

export const OPTIONS: Record<string, OptionSpec> = {
  server: { type: 'string', arg: 'URL', help: 'the server to load, http(s)://HOST:PORT[/organizations/ORG]' },
  key: { type: 'string', arg: 'FILE', help: "the private key of --user (with --spawn: the server's admin.pem)" },
  user: { type: 'string', arg: 'NAME', help: 'the user that provisions nodes and starts jobs (default admin)' },
  org: { type: 'string', arg: 'ORG', help: 'the organization (default: from --server, else default)' },
  spawn: { type: 'boolean', help: 'start a server of its own on free loopback ports, stopped at the end' },
  redis: {
    type: 'string',
    arg: 'URL',
    help: "with --spawn: store in this Redis instead of files; with --server: the server's Redis, read for redis_ops_per_heartbeat",
  },
  processes: {
    type: 'string',
    arg: 'N',
    help: 'with --spawn and --redis: start N server processes on that Redis, which share its organizations as a cluster (default 1)',
  },
  'heartbeat-interval': {
    type: 'string',
    arg: 'MS',
    help: "with --spawn: the server's heartbeat_interval (default the server's, 1000)",
  },
  nodes: { type: 'string', arg: 'N', help: 'simulated nodes (required)' },
  prefix: { type: 'string', arg: 'TEXT', help: 'start of the client and node names (default lt-)' },
  'client-key': {
    type: 'string',
    arg: 'FILE',
    help: 'the key the simulated clients share: read if the file exists, else made and saved there, so a later run reuses clients as they are (default: a new key each run)',
  },
  workers: { type: 'string', arg: 'W', help: 'processes the nodes are spread over (default: the core count)' },
  'nodes-per-connection': {
    type: 'string',
    arg: 'K',
    help: 'simulated nodes sharing one pair of ZeroMQ connections, each still signing as itself (default 1: a pair each, as real clients)',
  },
  jobs: { type: 'string', arg: 'J', help: 'jobs to run (default 1)' },
  'job-nodes': { type: 'string', arg: 'M', help: 'nodes in each job (default: all)' },
  quorum: {
    type: 'string',
    arg: 'Q|Q%',
    help: 'quorum of each job (of each wave with --waves), a count or a percentage (default 100%)',
  },
  waves: {
    type: 'string',
    arg: 'SIZES',
    help: 'run each job in waves of these sizes, counts or percentages of its nodes, the last repeated (e.g. 1,10%,100%)',
  },
  'max-failures': {
    type: 'string',
    arg: 'N|N%',
    help: 'with --waves: start no further wave past this many failures, or share of the nodes that ran',
  },
  pause: { type: 'string', arg: 'S', help: 'with --waves: seconds between one wave and the next (default 0)' },
  concurrency: { type: 'string', arg: 'C', help: 'jobs in flight at once, each on its own nodes (default 1)' },
  'abort-after': { type: 'string', arg: 'MS', help: 'abort each job this long after it was started' },
  'heartbeat-only': { type: 'boolean', help: 'run no job: only heartbeats, for --seconds' },
  seconds: { type: 'string', arg: 'S', help: 'length of a --heartbeat-only run (default 10)' },
  nack: { type: 'string', arg: 'P%', help: 'share of nodes that refuse every commit' },
  silent: { type: 'string', arg: 'P%', help: 'share of nodes that never vote' },
  'slow-vote': { type: 'string', arg: 'MS', help: 'every node votes this long after the commit arrives' },
  'crash-while-running': {
    type: 'string',
    arg: 'P%',
    help: 'share of nodes that go away once running, then come back',
  },
  fail: { type: 'string', arg: 'P%', help: 'share of nodes whose command fails (exit status 1)' },
  'run-ms': { type: 'string', arg: 'MS', help: 'how long each command runs (default 0)' },
  flap: { type: 'string', arg: 'P%', help: 'share of nodes whose heartbeats stop for a while and resume' },
  'late-heartbeats': {
    type: 'boolean',
    help: 'every node heartbeats late, yet within the offline threshold',
  },
  seed: { type: 'string', arg: 'N', help: 'seed of the behaviour assignment (default 1)' },
  'voting-timeout': { type: 'string', arg: 'S', help: "each job's voting timeout in seconds (default 10)" },
  'run-timeout': { type: 'string', arg: 'S', help: "each job's run timeout in seconds (default 60)" },
  command: { type: 'string', arg: 'NAME', help: 'the command each job names (default loadtest)' },
  timeout: { type: 'string', arg: 'S', help: 'the whole run stops after this long (default 300)' },
  'api-concurrency': { type: 'string', arg: 'N', help: 'signed requests in flight while provisioning (default 32)' },
  'rest-concurrency': {
    type: 'string',
    arg: 'N',
    help: 'loops of signed GETs of running jobs during the load, 0 for none (default 2)',
  },
  cleanup: { type: 'boolean', help: 'delete the clients and nodes of this run at the end' },
  json: { type: 'boolean', help: 'print the figures as one JSON object on the last line of stdout' },
  record: {
    type: 'string',
    arg: 'FILE',
    help: "append a JSON line to FILE for each node's commit, refusal, run, result, abort, connection and drop: each node's own record, for a checker",
  },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

export const USAGE = [
  'Usage: infra-loadtest (--server URL --key FILE | --spawn) --nodes N [OPTIONS]',
  '',
  'Plays a fleet of simulated push-jobs nodes against a server over real ZeroMQ, runs jobs on them and',
  'reports the figures; exits 1 when a job ends otherwise than its nodes and quorum make expected.',
  '',
  ...optionLines(OPTIONS),
].join('\n');

/** A share of the fleet, 0 to 1. */
export type Share = number;

export interface LoadOptions {
  server:
    { kind: 'url'; baseUrl: string } | { kind: 'spawn'; redis: string | null; heartbeatIntervalMs: number | null };
  key: string | null;
  /** The Redis the server stores in, when known: its INFO commandstats give redis_ops_per_heartbeat. */
  redis: string | null;
  /** Server processes to spawn on that Redis (1 without --spawn). */
  processes: number;
  clientKey: string | null;
  user: string;
  org: string;
  nodes: number;
  prefix: string;
  workers: number;
  nodesPerConnection: number;
  jobs: number;
  jobNodes: number;
  quorum: { kind: 'count'; value: number } | { kind: 'percent'; value: number };
  /** With --waves: the `rollout` of each job's body. */
  rollout: Rollout | null;
  concurrency: number;
  abortAfterMs: number | null;
  heartbeatOnly: boolean;
  seconds: number;
  behaviour: BehaviourShares;
  seed: number;
  votingTimeoutS: number;
  runTimeoutS: number;
  command: string;
  timeoutS: number;
  apiConcurrency: number;
  restConcurrency: number;
  cleanup: boolean;
  json: boolean;
  /** With --record: the file each simulated node appends its own record to. */
  record: string | null;
}

export interface BehaviourShares {
  nack: Share;
  silent: Share;
  crash: Share;
  fail: Share;
  flap: Share;
  slowVoteMs: number;
  runMs: number;
  lateHeartbeats: boolean;
}

export type ParsedLoadOptions =
  { kind: 'help'; text: string } | { kind: 'usage'; message: string } | { kind: 'run'; options: LoadOptions };

const count = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `expected a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, `expected a whole number from ${min} to ${max}`)
        .max(max, `expected a whole number from ${min} to ${max}`),
    );
const percent = z
  .string()
  .regex(/^\d+(\.\d+)?%?$/, 'expected a percentage such as 10%')
  .transform((s) => Number(s.replace('%', '')))
  .pipe(z.number().max(100, 'expected a percentage from 0% to 100%'))
  .transform((p) => p / 100);
const quorum = z
  .string()
  .regex(/^\d+%?$/, 'expected a count such as 40 or a percentage such as 80%')
  .transform((s) =>
    s.endsWith('%')
      ? { kind: 'percent' as const, value: Number(s.slice(0, -1)) }
      : { kind: 'count' as const, value: Number(s) },
  )
  .refine((q) => q.kind === 'count' || q.value <= 100, 'a percentage is at most 100%');
const httpUrl = z
  .string()
  .refine((s) => splitServerUrl(s) !== null || /^https?:\/\/[^/]+\/?$/.test(s), 'expected http(s)://HOST:PORT');
const redisUrl = z.string().regex(/^rediss?:\/\/[^/]+/, 'expected a redis:// or rediss:// URL');
const principal = z
  .string()
  .refine((s) => principalNameSchema.safeParse(s).success, 'expected a name of letters, digits, ".", "_" or "-"');
const nonEmpty = z.string().min(1, 'needs a value');
const prefix = z.string().regex(/^[A-Za-z0-9_.-]{0,64}$/, 'expected up to 64 letters, digits, ".", "_" or "-"');

/** The schema of each string option; the boolean ones need none. */
const SCHEMAS = {
  server: httpUrl,
  key: nonEmpty,
  user: principal,
  org: principal,
  redis: redisUrl,
  processes: count(1, 32),
  'heartbeat-interval': count(10, 60_000),
  nodes: count(1, 200_000),
  prefix,
  'client-key': nonEmpty,
  workers: count(1, 64),
  'nodes-per-connection': count(1, 10_000),
  jobs: count(0, 100_000),
  'job-nodes': count(1, 200_000),
  quorum,
  concurrency: count(1, 1000),
  'abort-after': count(0, 3_600_000),
  seconds: count(1, 3600),
  nack: percent,
  silent: percent,
  'slow-vote': count(0, 3_600_000),
  'crash-while-running': percent,
  fail: percent,
  'run-ms': count(0, 3_600_000),
  flap: percent,
  seed: count(0, 2 ** 31 - 1),
  'voting-timeout': count(1, 3600),
  'run-timeout': count(1, 86_400),
  command: z.string().regex(/^[A-Za-z0-9_.:-]{1,255}$/, 'expected a name of letters, digits, ".", ":", "_" or "-"'),
  timeout: count(1, 86_400),
  'api-concurrency': count(1, 1024),
  'rest-concurrency': count(0, 64),
  record: nonEmpty,
} satisfies Record<string, z.ZodType>;

type Checked = { [K in keyof typeof SCHEMAS]?: z.output<(typeof SCHEMAS)[K]> };

class UsageError extends Error {}

function check(values: Values): Checked {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    const raw = values[name];
    if (raw === undefined) continue;
    const parsed = (schema as z.ZodType).safeParse(raw);
    if (!parsed.success) {
      throw new UsageError(`--${name}: ${parsed.error.issues[0]?.message ?? 'invalid'}, got '${String(raw)}'`);
    }
    out[name] = parsed.data;
  }
  return out as Checked;
}

function need(condition: boolean, message: string): void {
  if (!condition) throw new UsageError(message);
}

/** The shares of each behaviour, which must leave room for one another. */
function behaviourOf(c: Checked, values: Values): BehaviourShares {
  const behaviour: BehaviourShares = {
    nack: c.nack ?? 0,
    silent: c.silent ?? 0,
    crash: c['crash-while-running'] ?? 0,
    fail: c.fail ?? 0,
    flap: c.flap ?? 0,
    slowVoteMs: c['slow-vote'] ?? 0,
    runMs: c['run-ms'] ?? 0,
    lateHeartbeats: values['late-heartbeats'] === true,
  };
  need(behaviour.nack + behaviour.silent <= 1, '--nack and --silent together exceed 100%');
  need(behaviour.crash + behaviour.fail <= 1, '--crash-while-running and --fail together exceed 100%');
  return behaviour;
}

/**
 * --waves, --max-failures and --pause as the cli reads them, checked against the job nodes as the server would
 * check them: every listed wave gets a node, and a quorum count fits in every wave (a percentage counts in each).
 */
function rolloutOf(values: Values, jobNodes: number, q: LoadOptions['quorum']): Rollout | null {
  const rollout = parseRollout(str(values, 'waves'), str(values, 'max-failures'), str(values, 'pause'));
  if (rollout === undefined) return null;
  const sizes = waveSizes(rollout.waves, jobNodes);
  need(
    sizes.length >= rollout.waves.length,
    `--waves: ${rollout.waves.length} waves need more nodes than the ${jobNodes} job nodes`,
  );
  const smallest = Math.min(...sizes);
  need(
    q.kind === 'percent' || q.value <= smallest,
    `--quorum: ${q.value} is more than the ${smallest} nodes of the smallest wave; a percentage counts in each wave`,
  );
  return rollout;
}

/** --server's base URL (empty with --spawn), and the organization it names unless --org names it alone. */
function serverUrlOf(c: Checked): { baseUrl: string; org: string | undefined } {
  let baseUrl = '';
  let org = c.org;
  if (c.server !== undefined) {
    const split = splitServerUrl(c.server);
    baseUrl = split === null ? c.server.replace(/\/+$/, '') : split.baseUrl.replace(/\/+$/, '');
    if (split !== null) {
      need(org === undefined || org === split.org, `--org ${org ?? ''} differs from the organization of --server`);
      org = split.org;
    }
  }
  return { baseUrl, org };
}

function combine(c: Checked, values: Values): LoadOptions {
  const spawn = values.spawn === true;
  need(spawn !== (c.server !== undefined), 'give either --server URL or --spawn');
  need(spawn || c.key !== undefined, '--server needs --key FILE, the private key of --user');
  need(
    c.processes === undefined || c.processes === 1 || (spawn && c.redis !== undefined),
    '--processes goes with --spawn and --redis: the processes of a cluster share one Redis',
  );
  need(
    c['heartbeat-interval'] === undefined || spawn,
    '--heartbeat-interval goes with --spawn; a server given by --server has its own',
  );
  need(c.nodes !== undefined, '--nodes is required');
  const nodes = c.nodes ?? 0;
  const heartbeatOnly = values['heartbeat-only'] === true;
  need(!(heartbeatOnly && c.jobs !== undefined && c.jobs > 0), '--heartbeat-only runs no job: leave out --jobs');
  const jobNodes = c['job-nodes'] ?? nodes;
  need(jobNodes <= nodes, `--job-nodes: ${jobNodes} is more than the ${nodes} nodes of --nodes`);
  const concurrency = c.concurrency ?? 1;
  need(
    concurrency * jobNodes <= nodes,
    `--concurrency: ${concurrency} jobs of ${jobNodes} nodes need ${concurrency * jobNodes} nodes, --nodes gives ${nodes}`,
  );
  const q = c.quorum ?? { kind: 'percent' as const, value: 100 };
  need(q.kind === 'percent' || q.value <= jobNodes, `--quorum: ${q.value} is more than the ${jobNodes} job nodes`);
  const behaviour = behaviourOf(c, values);
  const { baseUrl, org } = serverUrlOf(c);
  return {
    server: spawn
      ? { kind: 'spawn', redis: c.redis ?? null, heartbeatIntervalMs: c['heartbeat-interval'] ?? null }
      : { kind: 'url', baseUrl },
    key: c.key ?? null,
    redis: c.redis ?? null,
    processes: c.processes ?? 1,
    clientKey: c['client-key'] ?? null,
    user: c.user ?? 'admin',
    org: org ?? 'default',
    nodes,
    prefix: c.prefix ?? 'lt-',
    workers: Math.min(c.workers ?? availableParallelism(), nodes),
    nodesPerConnection: c['nodes-per-connection'] ?? 1,
    jobs: heartbeatOnly ? 0 : (c.jobs ?? 1),
    jobNodes,
    quorum: q,
    rollout: rolloutOf(values, jobNodes, q),
    concurrency,
    abortAfterMs: c['abort-after'] ?? null,
    heartbeatOnly,
    seconds: c.seconds ?? 10,
    behaviour,
    seed: c.seed ?? 1,
    votingTimeoutS: c['voting-timeout'] ?? 10,
    runTimeoutS: c['run-timeout'] ?? 60,
    command: c.command ?? 'loadtest',
    timeoutS: c.timeout ?? 300,
    apiConcurrency: c['api-concurrency'] ?? 32,
    restConcurrency: c['rest-concurrency'] ?? 2,
    cleanup: values.cleanup === true,
    json: values.json === true,
    record: c.record ?? null,
  };
}

export function parseLoadOptions(argv: readonly string[]): ParsedLoadOptions {
  try {
    const { values, positionals } = parseOptions(OPTIONS, argv);
    if (values.help === true) return { kind: 'help', text: USAGE };
    need(positionals.length === 0, `unexpected argument '${positionals[0] ?? ''}': every setting is an option`);
    return { kind: 'run', options: combine(check(values), values) };
  } catch (e) {
    return { kind: 'usage', message: messageOf(e) };
  }
}
