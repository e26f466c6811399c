// The setting of the cli end-to-end tests: a real infra-server child process, scripted push-jobs nodes, a scratch
// folder with its own HOME, and the cli run as a child process with the config.rb the server wrote.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { ApiClient } from '../../src/auth/api-client.js';
import type { RunningServer } from '../../src/server.js';
import { childEnv, runBin, type RunResult } from './process-run.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import type { TestServer } from './server.js';
import { poll, startTestNode, type TestNode } from './test-node.js';

export interface CliFixture {
  server: ServerProcess;
  pivotal: ApiClient;
  admin: ApiClient;
  scratch: string;
  env: NodeJS.ProcessEnv;
  configRb: string;
  nodes: TestNode[];
  /** The cli with the config.rb the server wrote at first start. */
  cli(args: string[], cwd?: string): Promise<RunResult>;
  /** A node stays unavailable until it answers the server's abort after a job it left (rehab), so wait for that. */
  available(...names: string[]): Promise<unknown>;
}

export const show = (r: RunResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
export const jobIdOf = (r: RunResult): string =>
  /Started\. {2}Job ID: ([0-9a-f]+)/.exec(r.stdout + r.stderr)?.[1] ?? '';

export async function startCliFixture(t: Test, nodeNames: readonly string[]): Promise<CliFixture> {
  const server = await startServerProcess(t, {
    settings: {
      server_name: '127.0.0.1',
      queue_listen_address: 'tcp://127.0.0.1',
      heartbeat_interval: 100,
      offline_threshold: 8,
    },
  });
  const pivotal = await server.client('pivotal');
  const admin = await server.client('admin');
  const scratch = await mkdtemp(join(tmpdir(), 'infra-cli-'));
  const home = join(scratch, 'home');
  await mkdir(home);
  t.teardown(() => rm(scratch, { recursive: true, force: true }));

  // The scripted nodes need only the HTTP side of a server: its URL and signed clients.
  const asTestServer: TestServer = {
    url: server.url,
    dataDir: server.dataDir,
    pivotal,
    admin,
    as: (userId, keyPem, opts = {}) => new ApiClient({ baseUrl: server.url, userId, key: keyPem, ...opts }),
    keyOf: (name) => server.keyOf(name),
    get running(): RunningServer {
      throw new Error('the server runs in a child process');
    },
    restart: () => Promise.reject(new Error('restart the child process with server.restart()')),
    beside: () => Promise.reject(new Error('the server runs in a child process')),
  };
  const nodes: TestNode[] = [];
  t.teardown(() => {
    for (const n of nodes) n.stop();
  });
  for (const name of nodeNames) nodes.push(await startTestNode(asTestServer, name));

  const configRb = join(server.dataDir, 'config.rb');
  const env = childEnv({ HOME: home });
  return {
    server,
    pivotal,
    admin,
    scratch,
    env,
    configRb,
    nodes,
    cli: (args, cwd = scratch) => runBin('cli', [...args, '-c', configRb], { cwd, env }),
    available: (...names) =>
      Promise.all(
        names.map((name) =>
          poll(
            `${name} to be available`,
            async () => {
              const res = await admin.request('GET', `/organizations/default/pushy/node_states/${name}`);
              return (res.body as { availability?: string }).availability === 'available' ? true : undefined;
            },
            10_000,
          ),
        ),
      ),
  };
}
