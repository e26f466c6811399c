// A redis-server of a test's own on a free loopback port, which the test may kill and start again, with its data
// (an append-only file in its folder) or without. Killed at teardown.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './deadline.js';
import { answers } from './redis-probe.js';
import { freePort } from './server-process.js';
import type { TeardownScope } from './teardown-scope.js';

export interface PrivateRedis {
  url: string;
  /** SIGKILL: the server goes away at once, as in a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port; `keepData: false` wipes its folder first, as a Redis without persistence. */
  start(opts?: { keepData?: boolean }): Promise<void>;
  /** SIGSTOP, then SIGCONT: a Redis that hangs with its connections open, as a host that stopped answering. */
  freeze(): void;
  thaw(): void;
}

export async function startPrivateRedis(t: TeardownScope): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'infra-test-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async ({ keepData = true } = {}) => {
    if (!keepData) {
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
    }
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
    ];
    child = spawn('redis-server', [...args, '--dir', dir], { stdio: 'ignore' });
    await until(`redis-server on port ${port}`, () => answers(port), 10_000);
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  t.teardown(async () => {
    await kill();
    await rm(dir, { recursive: true, force: true });
  });
  await start();
  return { url, kill, start, freeze: () => child?.kill('SIGSTOP'), thaw: () => child?.kill('SIGCONT') };
}
