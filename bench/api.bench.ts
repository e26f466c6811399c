// Signed, authenticated GETs per second on one server process. The server runs as its own child process
// (the compiled one, as operators run it); the load comes from this process over keep-alive connections.
// Requests are signed once and replayed: signing is the client's cost, not the server's.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { signRequest } from '../src/auth/signed-headers.js';
import { report, SHARED } from './support.js';

const DURATION_MS = 8000;
const CONCURRENCY = 32;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'infra-bench-'));
  const port = await freePort();
  await writeFile(
    join(dir, 'push-jobs-server.rb'),
    `api_port ${port}\napi_listen_address "127.0.0.1"\ndata_dir "${join(dir, 'data')}"\n`,
  );
  const server = spawn(process.execPath, ['dist/src/bin/infra-server.js', '-c', join(dir, 'push-jobs-server.rb')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, REDIS_URL: '' },
  });
  await new Promise<void>((resolve, reject) => {
    server.stdout.on('data', (b: Buffer) => {
      if (b.toString().includes('API listening')) resolve();
    });
    server.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  try {
    const key = await readFile(join(dir, 'data', 'admin.pem'), 'utf8');
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const rows: string[] = [];
    for (const [label, path] of [
      ['GET organization (user)', '/organizations/default'],
      ['GET client list (user)', '/organizations/default/clients'],
    ] as const) {
      const headers = signRequest({ privateKey: key, userId: 'admin', method: 'GET', path });
      const latencies: number[] = [];
      let errors = 0;
      const until = Date.now() + DURATION_MS;
      const worker = async () => {
        while (Date.now() < until) {
          const start = process.hrtime.bigint();
          const status = await new Promise<number>((resolve) => {
            const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers, agent }, (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            });
            req.on('error', () => resolve(0));
            req.end();
          });
          if (status !== 200) errors += 1;
          latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
        }
      };
      const t0 = Date.now();
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const secs = (Date.now() - t0) / 1000;
      latencies.sort((a, b) => a - b);
      rows.push(
        `| ${label} | ${CONCURRENCY} | ${Math.round(latencies.length / secs)} | ${percentile(latencies, 50).toFixed(2)} | ${percentile(latencies, 99).toFixed(2)} | ${errors} |`,
      );
      report(
        `${label}, ${CONCURRENCY} connections`,
        `${Math.round(latencies.length / secs)} req/s, p99 ${percentile(latencies, 99).toFixed(2)} ms, ${errors} errors`,
        { setup: SHARED },
      );
    }
    agent.destroy();
    console.log('| request | concurrency | requests/s | p50 ms | p99 ms | errors |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const r of rows) console.log(r);
  } finally {
    server.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
