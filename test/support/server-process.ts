// Starts infra-server as a child process for end-to-end tests: free ports, a fresh folder holding its
// push-jobs-server.rb and data_dir, and a wait for its "API listening on" log line. Stopped at teardown.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../../src/auth/api-client.js';
import { SERVER_CONFIG_FILE_NAME } from '../../src/config/server-config.js';
import { childEnv, distBin } from './process-run.js';
import type { TeardownScope } from './teardown-scope.js';

export type SettingLiteral = string | number | boolean;

export interface ServerProcessOptions {
  /** Settings added to or replacing the generated ones (ports, api_listen_address, data_dir). */
  settings?: Record<string, SettingLiteral>;
  /** Added to the child's environment (see childEnv: REDIS_URL is left out, so the store is files). */
  env?: NodeJS.ProcessEnv;
  /** How long to wait for the "API listening on" line (default 20 s). */
  startTimeoutMs?: number;
  /** The line that says the server has started, its URL captured (default READY_LINE, for log_format :text). */
  readyLine?: RegExp;
  /**
   * The open-file limits the server starts with (util-linux's prlimit runs it, keeping its pid), for tests that
   * drive it to its limit.
   */
  openFiles?: { soft: number; hard: number };
}

export interface ServerProcess {
  /** `http://127.0.0.1:PORT` as the server printed it. */
  url: string;
  /** The server's working folder; push-jobs-server.rb and data/ are in it. */
  dir: string;
  settingsFile: string;
  dataDir: string;
  ports: { api: number; command: number; heartbeat: number };
  pid: number;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  /** A key the first start wrote into data_dir, such as `pivotal` or `default-validator`. */
  keyOf(name: string): Promise<string>;
  /** A signed client; without a key, the one the first start wrote for `userId`. */
  client(userId: string, keyPem?: string): Promise<ApiClient>;
  /** SIGTERM, then SIGKILL after 5 s; resolves with how it ended. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Stops this server and starts another on the same folder and ports; this handle must not be used afterwards. */
  restart(): Promise<ServerProcess>;
}

/** A port nothing listens on right now: bound on port 0, then released. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * `count` distinct ports nothing listens on right now. Each is held until all are found: freePort called twice can
 * answer the same port twice, since it lets each go before the next is asked for.
 */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const held: net.Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      held.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, host, resolve);
      });
    }
    return held.map((server) => {
      const address = server.address();
      return typeof address === 'object' && address !== null ? address.port : 0;
    });
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** A server's three ports, distinct and free right now, as its settings name them. */
export async function serverPorts(): Promise<{
  api_port: number;
  command_port: number;
  server_heartbeat_port: number;
}> {
  const [api, command, heartbeat] = (await freePorts(3)) as [number, number, number];
  return { api_port: api, command_port: command, server_heartbeat_port: heartbeat };
}

/** The two push-jobs ports, distinct and free right now, as a server's settings name them. */
export async function pushPorts(): Promise<{ command_port: number; server_heartbeat_port: number }> {
  const [command, heartbeat] = (await freePorts(2)) as [number, number];
  return { command_port: command, server_heartbeat_port: heartbeat };
}

/**
 * The first of `count` consecutive ports nothing listens on right now, for a server whose members take ports at
 * fixed steps from their settings (`processes N`).
 */
export async function freePortBlock(count: number, host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = await freePort(host);
    if (base + count > 65535) continue;
    let free = true;
    for (let port = base + 1; port < base + count && free; port++) free = await bindable(port, host);
    if (free) return base;
  }
  throw new Error(`no ${count} free consecutive ports found`);
}

function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * A port another listener holds until the test ends, and a fresh folder for a server whose start must fail on it;
 * both go at teardown.
 */
export async function occupiedPort(t: TeardownScope): Promise<{ port: number; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-e2e-'));
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    await new Promise((resolve) => taken.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });
  const address = taken.address();
  return { port: typeof address === 'object' && address !== null ? address.port : 0, dir };
}

/** `name value` lines; strings are written double-quoted, which the settings reader takes literally. */
export function settingsText(settings: Record<string, SettingLiteral>): string {
  return Object.entries(settings)
    .map(([k, v]) => `${k} ${typeof v === 'string' ? JSON.stringify(v) : String(v)}\n`)
    .join('');
}

/** The info line the server logs once it has started, in the default text format. */
export const READY_LINE = /^\S+ INFO API listening on (\S+)\n/m;
const STOP_GRACE_MS = 5000;
/** A port found free can be taken before the server binds it: so many fresh sets of ports are tried. */
const PORT_ATTEMPTS = 3;
/** How the server says a port was taken: Node's code for the API port, libzmq's text or its own for the push-jobs
 * ports. */
const PORT_TAKEN = /EADDRINUSE|Address already in use|could not be bound \(in use/;

export async function startServerProcess(t: TeardownScope, opts: ServerProcessOptions = {}): Promise<ServerProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-e2e-'));
  const settingsFile = join(dir, SERVER_CONFIG_FILE_NAME);
  const dataDir = join(dir, 'data');
  let current: ChildProcess | undefined;
  t.teardown(async () => {
    if (current) await stopChild(current);
    await rm(dir, { recursive: true, force: true });
  });

  const launch = async (ports: ServerProcess['ports']): Promise<ServerProcess> => {
    const command = [process.execPath, distBin('infra-server'), '-c', settingsFile];
    const limited =
      opts.openFiles === undefined
        ? command
        : ['prlimit', `--nofile=${opts.openFiles.soft}:${opts.openFiles.hard}`, ...command];
    const child = spawn(limited[0] as string, limited.slice(1), {
      cwd: dir,
      env: childEnv(opts.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    current = child;
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(
          new Error(
            `infra-server did not print "API listening on" within ${opts.startTimeoutMs ?? 20_000} ms:\n${output}`,
          ),
        );
      }, opts.startTimeoutMs ?? 20_000);
      const onData = (d: string) => {
        output += d;
        const m = (opts.readyLine ?? READY_LINE).exec(output);
        if (m?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      };
      child.stdout?.setEncoding('utf8').on('data', onData);
      child.stderr?.setEncoding('utf8').on('data', onData);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new ExitedEarly(code, signal, output));
      });
    });
    const keyOf = (name: string) => readFile(join(dataDir, `${name}.pem`), 'utf8');
    const handle: ServerProcess = {
      url,
      dir,
      settingsFile,
      dataDir,
      ports,
      pid: child.pid ?? 0,
      output: () => output,
      keyOf,
      client: async (userId, keyPem) => new ApiClient({ baseUrl: url, userId, key: keyPem ?? (await keyOf(userId)) }),
      stop: async () => {
        const ended = await stopChild(child);
        current = undefined;
        return ended;
      },
      restart: async () => {
        await handle.stop();
        return launch(ports);
      },
    };
    return handle;
  };

  for (let attempt = 1; ; attempt++) {
    const [api, command, heartbeat] = (await freePorts(3)) as [number, number, number];
    const ports = { api, command, heartbeat };
    await writeFile(
      settingsFile,
      settingsText({
        api_listen_address: '127.0.0.1',
        api_port: ports.api,
        command_port: ports.command,
        server_heartbeat_port: ports.heartbeat,
        data_dir: dataDir,
        ...opts.settings,
      }),
    );
    try {
      return await launch(ports);
    } catch (e) {
      if (!(e instanceof ExitedEarly && PORT_TAKEN.test(e.output) && attempt < PORT_ATTEMPTS)) throw e;
    }
  }
}

class ExitedEarly extends Error {
  override name = 'ExitedEarly';
  constructor(
    code: number | null,
    signal: NodeJS.Signals | null,
    readonly output: string,
  ) {
    super(`infra-server exited (code ${code}, signal ${signal}) before it listened:\n${output}`);
  }
}

function stopChild(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    child.once('exit', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal });
    });
    child.kill('SIGTERM');
  });
}
