// A Redis Cluster of a test's own: three masters on free loopback ports (`redis-server --cluster-enabled yes`),
// joined by `redis-cli --cluster create`, each in its own folder. Killed at teardown.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { until } from './deadline.js';
import { answers, killAll, onPort } from './redis-probe.js';
import { runProcess } from './process-run.js';
import { freePort } from './server-process.js';

export interface PrivateRedisCluster {
  /** A URL naming one of the masters: enough for the server to find the others. */
  url: string;
  ports: number[];
}

export async function startRedisCluster(t: Test, masters = 3): Promise<PrivateRedisCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-test-redis-cluster-'));
  const children: ChildProcess[] = [];
  t.teardown(async () => {
    await killAll(children);
    await rm(dir, { recursive: true, force: true });
  });
  const ports: number[] = [];
  for (let i = 0; i < masters; i++) {
    const port = await freePort();
    ports.push(port);
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    args.push('--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--dir', dir);
    children.push(spawn('redis-server', args, { stdio: 'ignore' }));
  }
  for (const port of ports) await until(`redis-server on port ${port}`, () => answers(port), 10_000);
  const created = await runProcess('redis-cli', [
    '--cluster',
    'create',
    ...ports.map((p) => `127.0.0.1:${p}`),
    '--cluster-replicas',
    '0',
    '--cluster-yes',
  ]);
  if (created.code !== 0) throw new Error(`redis-cli --cluster create failed:\n${created.stdout}\n${created.stderr}`);
  await until(
    'the cluster to cover every slot',
    async () => {
      const info = await onPort(ports[0] ?? 0, (r) => r.cluster('INFO'));
      return typeof info === 'string' && info.includes('cluster_state:ok') ? true : undefined;
    },
    15_000,
  );
  return { url: `redis://127.0.0.1:${ports[0]}`, ports };
}
