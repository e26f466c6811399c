// Where a signed request's RSA check runs, by load: a server checking every signature on its main thread
// (signature_threads 0) against one with a worker thread (signature_threads 1, checks sent to it only while the
// main thread is saturated), each a signed GET of the organization's node list replayed by wrk over 1, 4 and 32
// connections. Rounds alternate between the servers; the figures are medians of ROUNDS. Needs `wrk`.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, report, scope, startServer, teardowns } from './support.js';
import { onPath, wrkSigned, type SignedTarget, type WrkFigures } from './wrk.js';

const ROUNDS = 3;
const SECONDS = 5;
const CONNECTIONS = [1, 4, 32];
const PATH = '/organizations/default/nodes';

async function main(): Promise<void> {
  if (!onPath('wrk')) {
    console.log('wrk is not installed (apt-get install wrk): nothing measured');
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'infra-bench-pool-'));
  scope.teardown(() => rm(dir, { recursive: true, force: true }));
  const targets: SignedTarget[] = [];
  for (const threads of [0, 1]) {
    const home = join(dir, `threads-${threads}`);
    await mkdir(home);
    const server = await startServer(home, { signature_threads: threads });
    const key = await readFile(join(server.dataDir, 'admin.pem'), 'utf8');
    targets.push({ label: `signature_threads ${threads}`, url: server.url, path: PATH, userId: 'admin', key });
  }
  const results = new Map<string, WrkFigures[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const connections of CONNECTIONS) {
      for (const t of targets) {
        const at = `${t.label}|${connections}`;
        results.set(at, [...(results.get(at) ?? []), await wrkSigned(dir, t, connections, SECONDS)]);
      }
    }
  }
  const mid = (xs: number[]) => median([...xs].sort((a, b) => a - b));
  console.log(`| server | connections | req/s (median of ${ROUNDS}) | each round | p50 ms | p99 ms | non-2xx |`);
  console.log('|---|---:|---:|---|---:|---:|---:|');
  for (const connections of CONNECTIONS) {
    for (const t of targets) {
      const rs = results.get(`${t.label}|${connections}`) ?? [];
      const each = rs.map((r) => Math.round(r.rps)).join(', ');
      const non2xx = rs.reduce((n, r) => n + r.non2xx, 0);
      console.log(
        `| ${t.label} | ${connections} | ${Math.round(mid(rs.map((r) => r.rps)))} | ${each} | ${mid(rs.map((r) => r.p50)).toFixed(2)} | ${mid(rs.map((r) => r.p99)).toFixed(2)} | ${non2xx} |`,
      );
    }
  }
  console.log(`\nwrk -t 1 -d ${SECONDS}s, GET ${PATH} signed once and replayed; both servers on this machine.`);
  const rate = (label: string, connections: number) =>
    mid((results.get(`${label}|${connections}`) ?? []).map((r) => r.rps));
  for (const connections of CONNECTIONS) {
    const [inline, worker] = targets.map((t) => rate(t.label, connections));
    if (inline === undefined || worker === undefined) continue;
    report(`signature worker thread at ${connections} connections`, `${Math.round(worker)} req/s`, {
      ratio: `${(worker / inline).toFixed(2)} × the check inline (${Math.round(inline)})`,
      setup: 'shared with wrk',
    });
  }
}

try {
  await main();
} finally {
  for (const fn of teardowns.reverse()) await fn();
}
