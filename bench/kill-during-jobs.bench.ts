// kill -9 of the server while a job over 1,000 simulated nodes (infra-loadtest) is running: after a restart on
// the same folder and ports, how many nodes' results the job still gets (resumed) and how many it loses. The
// original server marked every such job `crashed`. INFRA_BENCH_NODES sets the fleet (default 1000).
// INFRA_BENCH_KILL_IN=voting kills it instead while the job is voting, its nodes taking 2 s to vote: commits and
// acks in flight are lost with the server, and the restarted one must recover those votes before voting_timeout.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JobBody } from '../src/api/push-jobs.js';
import { isFinished } from '../src/push/job-states.js';
import { serverStatusSchema } from '../src/api/status-schema.js';
import { ApiClient } from '../src/auth/api-client.js';
import { until } from '../test/support/deadline.js';
import { serverPorts } from '../test/support/server-process.js';
import { report, runInTempDir, SHARED, spawnTester, startServer, teardowns } from './support.js';

const NODES = Number(process.env.INFRA_BENCH_NODES ?? 1000);
const KILL_IN = process.env.INFRA_BENCH_KILL_IN === 'voting' ? 'voting' : 'running';
const RUN_MS = KILL_IN === 'voting' ? 1000 : 20_000;
const SLOW_VOTE_MS = 2000;

runInTempDir('infra-bench-kill-', async (dir) => {
  const ports = await serverPorts();
  const first = await startServer(dir, ports);
  const keyFile = join(first.dataDir, 'admin.pem');
  const admin = new ApiClient({ baseUrl: first.url, userId: 'admin', key: await readFile(keyFile, 'utf8') });
  const tester = spawnTester([
    ...['--server', first.url, '--key', keyFile, '--nodes', String(NODES), '--jobs', '1'],
    ...['--run-ms', String(RUN_MS), '--run-timeout', '300', '--timeout', '600', '--json'],
    ...(KILL_IN === 'voting' ? ['--slow-vote', String(SLOW_VOTE_MS)] : []),
  ]);

  const jobPath = (id: string) => `/organizations/default/pushy/jobs/${id}`;
  const job = await until(
    KILL_IN === 'voting' ? 'a job voting' : 'a job with every node running',
    async () => {
      const list = (await admin.request('GET', '/organizations/default/pushy/jobs')).body as JobBody[];
      const id = list[0]?.id;
      if (id === undefined) return undefined;
      const j = (await admin.request('GET', jobPath(id))).body as JobBody;
      if (KILL_IN === 'voting') return j.status === 'voting' ? j : undefined;
      return (j.nodes.running?.length ?? 0) === NODES ? j : undefined;
    },
    600_000,
    KILL_IN === 'voting' ? 20 : 200,
  );
  if (KILL_IN === 'voting') await new Promise((r) => setTimeout(r, SLOW_VOTE_MS / 2)); // commits out, no vote yet
  process.kill(first.pid, 'SIGKILL');
  const killedAt = Date.now();
  await teardowns.splice(0, 1)[0]?.(); // the first server's stop: it is gone already
  await startServer(dir, ports, 600_000);
  const restartS = (Date.now() - killedAt) / 1000;
  const final = await until(
    'the job to end',
    async () => {
      const j = (await admin.request('GET', jobPath(job.id))).body as JobBody;
      return isFinished(j.status) ? j : undefined;
    },
    600_000,
    500,
  );
  const counts = Object.fromEntries(Object.entries(final.nodes).map(([s, names]) => [s, names.length]));
  const resumed = counts.succeeded ?? 0;
  const endedS = (Date.now() - killedAt) / 1000;
  const status = serverStatusSchema.parse((await admin.request('GET', '/_status')).body);
  const when =
    KILL_IN === 'voting'
      ? `voting (each node votes ${SLOW_VOTE_MS / 1000} s after its commit, then runs a ${RUN_MS / 1000} s command)`
      : `running a ${RUN_MS / 1000} s command`;
  console.log(`${NODES} nodes ${when}; server killed with -9, up in ${restartS.toFixed(1)} s\n`);
  console.log(
    '| job status | nodes succeeded (resumed) | nodes lost | nodes by status | ended after the kill | votes recovered |',
  );
  console.log('|---|---:|---:|---|---:|---|');
  console.log(
    `| ${final.status} | ${resumed} | ${NODES - resumed} | ${JSON.stringify(counts)} | ${endedS.toFixed(1)} s | ${JSON.stringify(status.push_jobs?.votes_recovered)} |`,
  );
  console.log(`\ninfra-loadtest: ${await tester.lastLine()}`);
  report(
    `kill -9 of the server, ${NODES} nodes ${KILL_IN}: nodes lost`,
    `${NODES - resumed} of ${NODES}; up again in ${restartS.toFixed(1)} s, job ${final.status} ${endedS.toFixed(1)} s after the kill`,
    { setup: SHARED },
  );
});
