// Signed GETs per second, side by side with a peer: infra-server answering GET .../pushy/jobs/ID (a running job,
// and a finished one) against goiardi (Debian's package) answering a signed GET of a node. One load generator for
// both, wrk, replaying requests signed once (a signature stays valid within the clock skew, so signing is the
// client's cost, not the servers'). Rounds alternate between the targets so drift hits both; the figure is the
// median of ROUNDS. Two floors run beside them (http-floor.ts): Node's own HTTP server answering the running job's
// bytes with nothing else, and the same making the RSA check of each signature; no server on Node's HTTP module
// answers faster on one thread. Needs `goiardi` and `wrk` (apt-get install goiardi wrk); without them it says so and
// exits 0.
import { spawn } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jobCreatedSchema } from '../src/api/push-jobs.js';
import { ApiClient } from '../src/auth/api-client.js';
import { until } from '../test/support/deadline.js';
import { startNodeFleet, waitForNodes } from '../test/support/node-fleet.js';
import { freePort } from '../test/support/server-process.js';
import { median, report, scope, startServer, target, teardowns } from './support.js';
import { onPath, SIGN_VERSION, wrkSigned, type SignedTarget, type WrkFigures } from './wrk.js';

const ROUNDS = 3;
const SECONDS = 8;
const CONNECTIONS = 32;

async function startGoiardi(dir: string): Promise<{ url: string; key: string }> {
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const child = spawn(
    'goiardi',
    ['--use-auth', '-A', '-P', String(port), '-I', '127.0.0.1', '-H', '127.0.0.1', '--conf-root', dir],
    { stdio: 'ignore' },
  );
  scope.teardown(() => child.kill('SIGTERM'));
  const url = `http://127.0.0.1:${port}`;
  const key = await until(
    'goiardi to write admin.pem and answer',
    async () => {
      const pem = await readFile(join(dir, 'admin.pem'), 'utf8').catch(() => undefined);
      if (pem === undefined) return undefined;
      return (await fetch(url).then(
        () => true,
        () => false,
      ))
        ? pem
        : undefined;
    },
    20_000,
  );
  return { url, key };
}

/** http-floor.ts in a process of its own, answering `answer`; with `publicKey`, checking each signature. */
async function startFloor(dir: string, answer: Buffer, publicKey?: string): Promise<string> {
  const port = await freePort();
  const answerFile = join(dir, `floor-${port}.json`);
  await writeFile(answerFile, answer);
  const args = [String(port), answerFile];
  if (publicKey !== undefined) {
    args.push(join(dir, `floor-${port}.pem`));
    await writeFile(join(dir, `floor-${port}.pem`), publicKey);
  }
  const floorFile = fileURLToPath(new URL('./http-floor.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', floorFile, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  scope.teardown(() => child.kill('SIGTERM'));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`http-floor.ts exited ${code}`)));
  });
  return `http://127.0.0.1:${port}`;
}

async function main(): Promise<void> {
  if (!onPath('goiardi') || !onPath('wrk')) {
    console.log('goiardi or wrk is not installed (apt-get install goiardi wrk): nothing measured');
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'infra-bench-peer-'));
  scope.teardown(() => rm(dir, { recursive: true, force: true }));

  const ours = await startServer(join(dir), { heartbeat_interval: 1000 });
  const adminKey = await readFile(join(ours.dataDir, 'admin.pem'), 'utf8');
  const admin = new ApiClient({ baseUrl: ours.url, userId: 'admin', key: adminKey });
  const nodes = await startNodeFleet(scope, {
    serverUrl: ours.url,
    validationKey: join(ours.dataDir, 'default-validator.pem'),
    dir: join(dir, 'nodes'),
    names: ['node1'],
    whitelist: () => ({ wait: 'sleep 600' }),
  });
  await waitForNodes(admin, nodes, 'available', 20_000);
  const start = async (body: object) =>
    jobCreatedSchema.parse((await admin.request('POST', '/organizations/default/pushy/jobs', body)).body).id;
  const running = await start({ command: 'wait', nodes: ['node1'] });
  // A job on a node that never answers ends at once; after its actor retires it answers from memory.
  const finished = await start({ command: 'wait', nodes: ['ghost'] });
  await new Promise((r) => setTimeout(r, 6000));

  const runningPath = `/organizations/default/pushy/jobs/${running}`;
  const answer = Buffer.from(JSON.stringify((await admin.request('GET', runningPath)).body));
  const publicKey = createPublicKey(adminKey).export({ type: 'spki', format: 'pem' }).toString();
  const floor = await startFloor(dir, answer);
  const checkedFloor = await startFloor(dir, answer, publicKey);

  const goiardi = await startGoiardi(join(dir, 'goiardi'));
  const gAdmin = new ApiClient({ baseUrl: goiardi.url, userId: 'admin', key: goiardi.key });
  const made = await gAdmin.request('POST', '/nodes', { name: 'node1', json_class: 'Chef::Node', chef_type: 'node' });
  if (made.status !== 201)
    throw new Error(`goiardi did not create the node: ${made.status} ${JSON.stringify(made.body)}`);

  const targets: SignedTarget[] = [
    { label: 'goiardi: GET /nodes/node1', url: goiardi.url, path: '/nodes/node1', userId: 'admin', key: goiardi.key },
    {
      label: 'infra-server: GET a running job',
      url: ours.url,
      path: runningPath,
      userId: 'admin',
      key: adminKey,
    },
    {
      label: 'infra-server: GET a finished job',
      url: ours.url,
      path: `/organizations/default/pushy/jobs/${finished}`,
      userId: 'admin',
      key: adminKey,
    },
    {
      label: 'infra-server: GET a node',
      url: ours.url,
      path: '/organizations/default/nodes/node1',
      userId: 'admin',
      key: adminKey,
    },
    { label: 'floor: node:http, the same answer', url: floor, path: runningPath, userId: 'admin', key: adminKey },
    {
      label: 'floor: node:http, the same answer, RSA check',
      url: checkedFloor,
      path: runningPath,
      userId: 'admin',
      key: adminKey,
    },
  ];
  const results = new Map<string, WrkFigures[]>();
  // INFRA_BENCH_ONLY=TEXT measures only the targets whose label holds TEXT (with a CPU profile, say).
  const only = process.env.INFRA_BENCH_ONLY;
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets.filter((x) => !only || x.label.includes(only)))
      results.set(t.label, [...(results.get(t.label) ?? []), await wrkSigned(dir, t, CONNECTIONS, SECONDS)]);
  }
  const peer = median((results.get(targets[0]?.label ?? '') ?? []).map((r) => r.rps).sort((a, b) => a - b));
  console.log(`| Request | req/s (median of ${ROUNDS}) | each round | p99 ms (median) | vs goiardi | non-2xx |`);
  console.log('|---|---|---|---|---|---|');
  for (const t of targets) {
    const rs = results.get(t.label) ?? [];
    const rps = median(rs.map((r) => r.rps).sort((a, b) => a - b));
    const p99 = median(rs.map((r) => r.p99).sort((a, b) => a - b));
    const each = rs.map((r) => Math.round(r.rps)).join(', ');
    const non2xx = rs.reduce((n, r) => n + r.non2xx, 0);
    console.log(
      `| ${t.label} | ${Math.round(rps)} | ${each} | ${p99.toFixed(2)} | ${(rps / peer).toFixed(2)}x | ${non2xx} |`,
    );
  }
  const checking = results.get(targets[5]?.label ?? '') ?? [];
  const floorRps = median(checking.map((r) => r.rps).sort((a, b) => a - b));
  for (const t of targets.slice(0, 4)) {
    const rs = results.get(t.label) ?? [];
    if (rs.length === 0) continue;
    const rps = median(rs.map((r) => r.rps).sort((a, b) => a - b));
    const ours = t.label.startsWith('infra-server');
    report(`${t.label}, ${CONNECTIONS} connections`, `${Math.round(rps)} req/s`, {
      ...(ours ? { target: target('≥ 2 × goiardi', rps >= 2 * peer) } : {}),
      ratio: `${(rps / peer).toFixed(2)} × goiardi${ours && checking.length > 0 ? `, ${(rps / floorRps).toFixed(2)} × the checking floor` : ''}`,
      setup: 'shared with wrk',
    });
  }
  console.log(
    `\nwrk -t 1 -c ${CONNECTIONS} -d ${SECONDS}s, signed (${SIGN_VERSION}) once and replayed; both servers on this machine.`,
  );
}

try {
  await main();
} finally {
  for (const fn of teardowns.reverse()) await fn();
}
