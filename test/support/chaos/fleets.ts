// The nodes a chaos run drives, and where their own records come from: real push-jobs-client processes (each its
// client.log), or infra-loadtest's simulated nodes for a fleet too large for real clients on one machine (its
// --record file). Either way the runner sees node names and, at the end, one record per node.
import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { nodeStateListSchema } from '../../../src/api/push-jobs.js';
import type { ApiClient } from '../../../src/auth/api-client.js';
import { until } from '../deadline.js';
import { startNodeFleet, waitForNodes } from '../node-fleet.js';
import { childEnv, distBin } from '../process-run.js';
import type { TeardownScope } from '../teardown-scope.js';
import { parseClientLog, type ClientRecord } from './client-records.js';
import { parseLoadtestRecords } from './loadtest-records.js';

export interface FleetUnderTest {
  names: string[];
  /** What each node did, by its own account, read at the end of the run. */
  records(): Promise<Record<string, ClientRecord>>;
}

export interface ClientFleetOptions {
  /** Each node's server URL: the balancer, or one member (a client.rb names one host). */
  serverUrl(index: number): string;
  validationKey: string;
  dir: string;
  count: number;
  whitelist: Record<string, string>;
  admin: ApiClient;
  /** The clients' log level: info by default (every job step and drop, without a line per message received). */
  logLevel?: 'debug' | 'info';
}

export async function startClientFleet(scope: TeardownScope, o: ClientFleetOptions): Promise<FleetUnderTest> {
  await mkdir(o.dir, { recursive: true });
  const names = Array.from({ length: o.count }, (_, i) => `node${i + 1}`);
  const nodes = await Promise.all(
    names.map((name, i) =>
      startNodeFleet(scope, {
        serverUrl: o.serverUrl(i),
        validationKey: o.validationKey,
        dir: o.dir,
        names: [name],
        whitelist: () => o.whitelist,
        logLevel: o.logLevel ?? 'info',
      }),
    ),
  ).then((each) => each.flat());
  await waitForNodes(o.admin, nodes, 'available', 60_000);
  return {
    names,
    records: async () => {
      const out: Record<string, ClientRecord> = {};
      for (const n of nodes) out[n.name] = parseClientLog(n.name, await n.log());
      return out;
    },
  };
}

export interface SimulatedFleetOptions {
  serverUrl: string;
  /** admin's key file, which the tester signs its provisioning with. */
  keyFile: string;
  dir: string;
  count: number;
  /** How long each simulated command runs: every job's, long or short. */
  runMs: number;
  admin: ApiClient;
}

/** The tester runs heartbeats only (its nodes answer the runner's jobs) for at most its longest run, an hour. */
const TESTER_SECONDS = 3600;

export async function startSimulatedFleet(scope: TeardownScope, o: SimulatedFleetOptions): Promise<FleetUnderTest> {
  await mkdir(o.dir, { recursive: true });
  const file = join(o.dir, 'simulated-nodes.jsonl');
  const prefix = 'sim-';
  const width = String(o.count).length;
  const names = Array.from({ length: o.count }, (_, i) => `${prefix}${String(i + 1).padStart(width, '0')}`);
  const args = ['--server', o.serverUrl, '--key', o.keyFile, '--nodes', String(o.count), '--prefix', prefix];
  args.push('--heartbeat-only', '--seconds', String(TESTER_SECONDS), '--timeout', String(TESTER_SECONDS + 600));
  args.push('--run-ms', String(o.runMs), '--rest-concurrency', '0', '--record', file);
  const tester = spawn(process.execPath, [distBin('infra-loadtest'), ...args], {
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  tester.stdout.setEncoding('utf8').on('data', (d: string) => (output = (output + d).slice(-20_000)));
  tester.stderr.setEncoding('utf8').on('data', (d: string) => (output = (output + d).slice(-20_000)));
  scope.teardown(() => {
    if (tester.exitCode === null && tester.signalCode === null) tester.kill('SIGKILL');
  });
  await until(
    `${o.count} simulated nodes to be available`,
    async () => {
      if (tester.exitCode !== null) throw new Error(`infra-loadtest exited with ${tester.exitCode}:\n${output}`);
      const res = await o.admin.request('GET', '/organizations/default/pushy/node_states').catch(() => undefined);
      const rows = res?.status === 200 ? nodeStateListSchema.safeParse(res.body) : undefined;
      if (!rows?.success) return undefined;
      const available = new Set(rows.data.filter((r) => r.availability === 'available').map((r) => r.node_name));
      return names.every((n) => available.has(n)) ? true : undefined;
    },
    600_000,
    1000,
  );
  return {
    names,
    records: async () => parseLoadtestRecords(await readFile(file, 'utf8').catch(() => ''), names),
  };
}
