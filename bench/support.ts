// What the benchmarks share: the compiled server in a child process, teardowns run at the end, readings of
// a process's CPU time and memory from /proc, and report(), which prints a figure as a row of the results page.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, distBin } from '../test/support/process-run.js';
import { READY_LINE, serverPorts, settingsText, type SettingLiteral } from '../test/support/server-process.js';
import { benchCommand, resultLine, type Result } from './results.js';

export const teardowns: Array<() => unknown> = [];
export const scope = { teardown: (fn: () => unknown) => void teardowns.push(fn) };

/** With INFRA_BENCH_CPU_PROF_DIR set, the server writes a CPU profile (node --cpu-prof) there when it stops. */
function profile(): string[] {
  const dir = process.env.INFRA_BENCH_CPU_PROF_DIR;
  return dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : [];
}

/** The compiled infra-server in a child process on free loopback ports, its data under `dir`. */
export async function startServer(
  dir: string,
  settings: Record<string, SettingLiteral> = {},
  startTimeoutMs = 20_000,
): Promise<{ url: string; dataDir: string; pid: number }> {
  const dataDir = join(dir, 'data');
  const settingsFile = join(dir, 'push-jobs-server.rb');
  await writeFile(
    settingsFile,
    settingsText({
      api_listen_address: '127.0.0.1',
      ...(await serverPorts()),
      server_name: '127.0.0.1',
      queue_listen_address: 'tcp://127.0.0.1',
      data_dir: dataDir,
      ...settings,
    }),
  );
  const child = spawn(process.execPath, [...profile(), distBin('infra-server'), '-c', settingsFile], {
    cwd: dir,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  scope.teardown(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  );
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${output}`)), startTimeoutMs);
    const onData = (d: string) => {
      output += d;
      const m = READY_LINE.exec(output);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
  });
  return { url, dataDir, pid: child.pid ?? 0 };
}

/**
 * Prints one figure of this benchmark as a `RESULT` line (bench/results.ts), which `npm run bench` gathers into the
 * benchmark's table; the command is this process's, with its INFRA_BENCH_* settings.
 */
export function report(figure: string, value: string, more: Pick<Result, 'target' | 'ratio' | 'setup'> = {}): void {
  const command = benchCommand(process.argv[1] ?? 'unknown', process.argv.slice(2), process.env);
  console.log(resultLine({ figure, value, ...more, command }));
}

/** What a figure was measured beside, for report()'s `setup`. */
export const SHARED = 'shared with the load generator';

/** A target and whether it is met, for report()'s `target`. */
export const target = (text: string, met: boolean): string => `${text}: ${met ? 'met' : 'not met'}`;

export const median = (sorted: readonly number[]): number => {
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
};

/** utime + stime of a process, in clock ticks (proc(5): fields 14 and 15 of /proc/PID/stat). */
export async function cpuTicks(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** VmRSS of a process, in KiB. */
export async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN);
}

/** infra-loadtest in a child process with `args`, killed at teardown. */
export function spawnTester(args: readonly string[]): { lastLine(): Promise<string>; output(): Promise<string> } {
  const tester = spawn(process.execPath, ['dist/src/bin/infra-loadtest.js', ...args], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  scope.teardown(() => tester.kill('SIGKILL'));
  let out = '';
  tester.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const done = new Promise((r) => tester.once('exit', r));
  return {
    /** Its last line of output once it ends, or 10 s after asked. */
    lastLine: async () => {
      await Promise.race([done, new Promise((r) => setTimeout(r, 10_000))]);
      return (out.trim().split('\n').at(-1) ?? '').slice(0, 400);
    },
    /** Everything it wrote, once it ends. */
    output: async () => {
      await done;
      return out;
    },
  };
}

/** Runs a benchmark in a fresh temporary folder, then every teardown, and exits 1 when it fails. */
export function runInTempDir(prefix: string, bench: (dir: string) => Promise<void>): void {
  const run = async () => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    try {
      await bench(dir);
    } finally {
      for (const fn of teardowns.splice(0).reverse()) await fn();
      await rm(dir, { recursive: true, force: true });
    }
  };
  run().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
