// The server as a local process: started by --spawn (the compiled infra-server in a child process, on free
// loopback ports, with a settings file and data folder of its own), or found by the port it listens on; and its
// CPU time and memory read from /proc.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { besideModule, nodeArgsFor } from '../lib/sibling-module.js';

export interface SpawnedServer {
  baseUrl: string;
  pid: number;
  /** The admin user's key the first start wrote, or null when the store was set up before (a used Redis). */
  adminKeyPem: string | null;
  /** The server's recent output lines. */
  output(): string[];
  stop(): Promise<void>;
}

const READY = /^\S+ INFO API listening on (\S+)$/;
const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5000;
const KEPT_LINES = 5000;

/**
 * `count` loopback ports nothing listens on now, all different: every probe holds its port until all have one
 * (probed one after another, a port let go could be handed out again).
 */
export async function freePorts(count: number): Promise<number[]> {
  const probes = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const probe = createServer();
          probe.once('error', reject);
          probe.listen({ port: 0, host: '127.0.0.1' }, () => resolve(probe));
        }),
    ),
  );
  const ports = probes.map((p) => {
    const address = p.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  });
  await Promise.all(probes.map((p) => new Promise<void>((resolve) => p.close(() => resolve()))));
  return ports;
}

/** Node's arguments to run the infra-server entry beside this module, compiled or from the sources. */
function serverCommand(): string[] {
  return nodeArgsFor(fileURLToPath(besideModule(import.meta.url, '../bin/infra-server')));
}

/** Starts on free ports; another process can take one between the probe and the bind, so a few tries. */
const START_ATTEMPTS = 3;

/** `redis`: the store, else files; `heartbeatIntervalMs`: the server's heartbeat_interval, else its default. */
export async function spawnServer(redis: string | null, heartbeatIntervalMs: number | null): Promise<SpawnedServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnOnce(redis, heartbeatIntervalMs);
    } catch (e) {
      const taken = e instanceof Error && /Address already in use|EADDRINUSE/.test(e.message);
      if (!taken || attempt >= START_ATTEMPTS) throw e;
    }
  }
}

/** The settings file of a spawned server: free loopback ports, its data folder in `dir`, and its store. */
async function writeSettings(
  dir: string,
  redis: string | null,
  heartbeatIntervalMs: number | null,
): Promise<{ settingsFile: string; dataDir: string }> {
  const dataDir = join(dir, 'data');
  const settingsFile = join(dir, 'push-jobs-server.rb');
  const [api = 0, command = 0, heartbeat = 0] = await freePorts(3);
  const settings: Record<string, string | number> = {
    api_listen_address: '127.0.0.1',
    api_port: api,
    command_port: command,
    server_heartbeat_port: heartbeat,
    server_name: '127.0.0.1',
    queue_listen_address: 'tcp://127.0.0.1',
    data_dir: dataDir,
  };
  if (redis !== null) settings.redis_url = redis;
  if (heartbeatIntervalMs !== null) settings.heartbeat_interval = heartbeatIntervalMs;
  const text = Object.entries(settings)
    .map(([k, v]) => `${k} ${typeof v === 'string' ? JSON.stringify(v) : v}`)
    .join('\n');
  await writeFile(settingsFile, `${text}\n`);
  return { settingsFile, dataDir };
}

/**
 * Keeps the child's last KEPT_LINES lines of output in `lines`, and resolves with the URL it says it listens on;
 * rejects, with what it wrote, when it exits first or is not listening within START_TIMEOUT_MS.
 */
function listening(child: ChildProcessByStdio<null, Readable, Readable>, exited: Promise<void>, lines: string[]) {
  let partial = '';
  return new Promise<string>((resolve, reject) => {
    // Node's own timers here and in `stop`: they only bound the waits for the server process.
    const timer = setTimeout(
      () => reject(new Error(`the server did not start:\n${lines.join('\n')}`)),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        const m = READY.exec(line);
        if (m?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      }
      if (lines.length > KEPT_LINES) lines.splice(0, lines.length - KEPT_LINES);
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the server exited before it listened:\n${lines.join('\n')}`));
    });
  });
}

async function spawnOnce(redis: string | null, heartbeatIntervalMs: number | null): Promise<SpawnedServer> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-loadtest-'));
  const { settingsFile, dataDir } = await writeSettings(dir, redis, heartbeatIntervalMs);
  const env = { ...process.env };
  delete env.REDIS_URL;
  const child = spawn(process.execPath, [...serverCommand(), '-c', settingsFile], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // However this process ends (an error, a closed output pipe, a signal it handles), the server ends with it.
  const onExit = () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  const lines: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const baseUrl = await listening(child, exited, lines).catch((e: unknown) => {
    process.off('exit', onExit);
    onExit();
    throw e;
  });
  let adminKeyPem: string | null = null;
  try {
    adminKeyPem = await readFile(join(dataDir, 'admin.pem'), 'utf8');
  } catch {
    // A store set up by an earlier server: its keys were written where that server ran.
  }
  const stop = async () => {
    process.off('exit', onExit);
    if (child.exitCode === null && child.signalCode === null) {
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(killer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  return { baseUrl, pid: child.pid ?? 0, adminKeyPem, output: () => lines, stop };
}

/** The process listening on TCP `port` of this machine, from /proc/net/tcp* and /proc/PID/fd; null if none is seen. */
export async function findListeningPid(port: number): Promise<number | null> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const row of text.split('\n').slice(1)) {
      const f = row.trim().split(/\s+/);
      const local = f[1] ?? '';
      // State 0A is LISTEN.
      if (f[3] === '0A' && parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port && f[9] !== undefined)
        inodes.add(`socket:[${f[9]}]`);
    }
  }
  if (inodes.size === 0) return null;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = await readdir(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (inodes.has(await readlink(`/proc/${entry}/fd/${fd}`))) return Number(entry);
      } catch {
        // The descriptor closed meanwhile.
      }
    }
  }
  return null;
}

/** Clock ticks a second of /proc/PID/stat times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** User plus system CPU seconds of a process so far (proc(5), fields 14 and 15). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
}

/** Resident memory of a process, in MiB. */
export async function rssMiB(pid: number): Promise<number> {
  return (await memoryMiB(pid)).rss;
}

/** Resident memory of a process now and at its peak so far (VmRSS, VmHWM), in MiB. */
export async function memoryMiB(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}
