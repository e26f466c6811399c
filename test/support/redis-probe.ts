// One command to a redis-server of a test's own, on a connection opened for it: undefined when the server does not
// answer (not started yet, or gone), so a test can poll for a state with `until`.
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';

export async function onPort<T>(port: number, run: (r: Redis) => Promise<T>): Promise<T | undefined> {
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined); // a refused connection is the answer "not yet", not an error to print
  try {
    await probe.connect();
    return await run(probe);
  } catch {
    return undefined;
  } finally {
    probe.disconnect();
  }
}

/** True once the server on `port` answers PING. */
export async function answers(port: number): Promise<true | undefined> {
  return (await onPort(port, (r) => r.ping())) === 'PONG' ? true : undefined;
}

/** SIGKILLs each child still running and resolves once all have exited (a test's teardown). */
export async function killAll(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once('exit', () => resolve());
          c.kill('SIGKILL');
        }),
    ),
  );
}
