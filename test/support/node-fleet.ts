// Real push-jobs-client child processes for end-to-end tests: one folder and one client.rb per node, the first
// run registering through the validator key (spec 5.3), stop and start again on the same files, and waits on
// what the server says of them. Every client still running is killed at teardown.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApiClient } from '../../src/auth/api-client.js';
import { childEnv, distBin } from './process-run.js';
import { until } from './deadline.js';
import type { TeardownScope } from './teardown-scope.js';

export interface FleetOptions {
  /** `http://HOST:PORT` of the server; client.rb gets it with `/organizations/ORG`. */
  serverUrl: string;
  org?: string;
  /** The validator key file the server wrote (`<data_dir>/ORG-validator.pem`), used as it is. */
  validationKey: string;
  /** Each node gets a folder `<dir>/<name>` holding client.rb, client.pem, client.log and its job files. */
  dir: string;
  names: readonly string[];
  /** client.rb's whitelist for a node. */
  whitelist(name: string): Record<string, string>;
  logLevel?: 'debug' | 'info';
}

export interface FleetNode {
  name: string;
  dir: string;
  configFile: string;
  /** The running client's pid; 0 when stopped. */
  pid(): number;
  running(): boolean;
  /** client.log, then anything the client wrote to stderr. */
  log(): Promise<string>;
  /** Starts the client on its client.rb (registering on the first run). */
  start(): void;
  /** SIGTERM, then SIGKILL after 10 s; resolves with the exit code (null when killed). */
  stop(): Promise<number | null>;
  /** SIGSTOP: the client neither sends nor receives anything until `resume`, as if cut off. */
  freeze(): void;
  /** SIGCONT after `freeze`. */
  resume(): void;
}

const rubyString = (s: string): string => JSON.stringify(s);

/** client.rb as a node's owner writes it: the first run has no client.pem, so the client registers. */
export function clientRb(o: FleetOptions, name: string): string {
  const entries = Object.entries(o.whitelist(name)).map(([k, v]) => `  ${rubyString(k)} => ${rubyString(v)},`);
  const org = o.org ?? 'default';
  return [
    `chef_server_url ${rubyString(`${o.serverUrl}/organizations/${org}`)}`,
    `node_name ${rubyString(name)}`,
    `client_key ${rubyString('client.pem')}`,
    `validation_client_name ${rubyString(`${org}-validator`)}`,
    `validation_key ${rubyString(o.validationKey)}`,
    `file_dir ${rubyString('files')}`,
    `log_level :${o.logLevel ?? 'debug'}`,
    `log_location ${rubyString('client.log')}`,
    'whitelist({',
    ...entries,
    '})',
    '',
  ].join('\n');
}

const STOP_GRACE_MS = 10_000;

async function fleetNode(scope: TeardownScope, o: FleetOptions, name: string): Promise<FleetNode> {
  const dir = join(o.dir, name);
  await mkdir(dir, { recursive: true });
  const configFile = join(dir, 'client.rb');
  await writeFile(configFile, clientRb(o, name));
  let child: ChildProcess | undefined;
  let stderr = '';
  const alive = (c: ChildProcess | undefined): boolean =>
    c !== undefined && c.exitCode === null && c.signalCode === null;
  scope.teardown(() => {
    if (alive(child)) child?.kill('SIGKILL');
  });
  return {
    name,
    dir,
    configFile,
    pid: () => (alive(child) ? (child?.pid ?? 0) : 0),
    running: () => alive(child),
    log: async () => `${await readFile(join(dir, 'client.log'), 'utf8').catch(() => '')}${stderr}`,
    start: () => {
      if (alive(child)) throw new Error(`${name} is running already`);
      child = spawn(process.execPath, [distBin('push-jobs-client'), '-c', configFile], {
        env: childEnv(),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    },
    stop: () => {
      const c = child;
      if (c === undefined) return Promise.resolve(null);
      if (!alive(c)) return Promise.resolve(c.exitCode);
      return new Promise((resolve) => {
        const killer = setTimeout(() => c.kill('SIGKILL'), STOP_GRACE_MS);
        c.once('exit', (code) => {
          clearTimeout(killer);
          resolve(code);
        });
        c.kill('SIGTERM');
      });
    },
    freeze: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
  };
}

/** Writes every node's client.rb and starts the clients; they register and connect on their own. */
export async function startNodeFleet(scope: TeardownScope, o: FleetOptions): Promise<FleetNode[]> {
  const nodes = await Promise.all(o.names.map((name) => fleetNode(scope, o, name)));
  for (const node of nodes) node.start();
  return nodes;
}

export interface NodeStateView {
  node_name: string;
  status: string;
  availability: string;
}

async function nodeStates(api: ApiClient, org: string): Promise<Map<string, NodeStateView>> {
  const res = await api.request('GET', `/organizations/${org}/pushy/node_states`);
  const rows = res.status === 200 && Array.isArray(res.body) ? (res.body as NodeStateView[]) : [];
  return new Map(rows.map((r) => [r.node_name, r]));
}

/**
 * Waits until every node named has the wanted availability (`available`: up and out of rehab) or status
 * (`down`), failing after `timeoutMs` with the states last seen and the log of any client that exited.
 */
export async function waitForNodes(
  api: ApiClient,
  nodes: readonly FleetNode[],
  want: 'available' | 'down',
  timeoutMs = 15_000,
  org = 'default',
): Promise<void> {
  let seen = new Map<string, NodeStateView>();
  try {
    await until(
      `${nodes.map((n) => n.name).join(', ')} to be ${want}`,
      async () => {
        for (const n of nodes) {
          if (want === 'available' && !n.running()) throw new Error(`${n.name} is not running:\n${await n.log()}`);
        }
        seen = await nodeStates(api, org);
        const ok = nodes.every((n) =>
          want === 'down' ? seen.get(n.name)?.status === 'down' : seen.get(n.name)?.availability === 'available',
        );
        return ok ? true : undefined;
      },
      timeoutMs,
    );
  } catch (e) {
    const states = [...seen.values()].map((s) => `${s.node_name} ${s.status} ${s.availability}`).join('; ');
    throw new Error(`${e instanceof Error ? e.message : String(e)} (node states: ${states || 'none'})`, { cause: e });
  }
}

/** Gone, or a zombie nobody reaped yet: either way it runs no more. */
export async function processGone(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat === null || / Z /.test(stat.slice(stat.lastIndexOf(')')));
}

/** The pid a job command wrote into `file` (a number and a newline). */
export function pidFrom(file: string, timeoutMs = 10_000): Promise<number> {
  return until(
    `a pid in ${file}`,
    async () => {
      const text = await readFile(file, 'utf8').catch(() => '');
      return /^\d+\n$/.test(text) ? Number(text) : undefined;
    },
    timeoutMs,
  );
}
