// Child processes for end-to-end tests: the built executables under dist/, an environment free of the test
// runner's hooks, and a run-to-completion helper that captures stdout, stderr and the exit code.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's root, whether this file runs from test/support or compiled under dist/test/support. */
export const REPO_ROOT = repoRoot(dirname(fileURLToPath(import.meta.url)));

function repoRoot(from: string): string {
  const up = resolve(from, '..', '..');
  return existsSync(join(up, 'package.json')) ? up : resolve(up, '..');
}

export type BinName = 'infra-server' | 'infra-server-ctl' | 'cli' | 'push-jobs-client' | 'infra-loadtest';

/** The compiled entry point; the e2e tests run what users run, so the build must exist. */
export function distBin(name: BinName): string {
  const file = join(REPO_ROOT, 'dist', 'src', 'bin', `${name}.js`);
  if (!existsSync(file)) {
    throw new Error(`${file} is missing: build first with \`npx tsc -p tsconfig.json\` (npm test does it)`);
  }
  return file;
}

/**
 * The test process's environment without REDIS_URL (a child server would otherwise share one Redis and its
 * first-start state with every other test) and without the test runner's NODE_OPTIONS hooks.
 */
export function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.REDIS_URL;
  const nodeOptions = (env.NODE_OPTIONS ?? '').split(/\s+/).filter((o) => o !== '' && !o.includes('@tapjs/'));
  if (nodeOptions.length > 0) env.NODE_OPTIONS = nodeOptions.join(' ');
  else delete env.NODE_OPTIONS;
  return { ...env, ...extra };
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed; without it stdin is closed at once. */
  input?: string;
  /** The child is killed after this long (default 20 s), and the run rejects. */
  timeoutMs?: number;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function runProcess(file: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, { cwd: opts.cwd, env: opts.env ?? childEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timeoutMs = opts.timeoutMs ?? 20_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `${file} ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
    // A child that exits without reading its input makes the write fail with EPIPE; that is its business.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}

/** Runs a built executable with this Node. */
export function runBin(name: BinName, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return runProcess(process.execPath, [distBin(name), ...args], opts);
}
