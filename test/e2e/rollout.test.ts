// Rollouts end to end: infra-server, six real push-jobs-client nodes and the cli as child processes. A job in three
// waves whose second wave fails stops there (wave three never starts, its nodes never hear of the job); an abort
// during the pause between waves starts none after it; a kill -9 of the server during a pause loses neither the
// pause nor the next wave. The subtests share one server and its nodes, in order.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { jobSchema } from '../../src/api/push-jobs.js';
import { cliWaitForJob, cliWith, jobIdOf, show } from '../support/cli-run.js';
import { until } from '../support/deadline.js';
import { startNodeFleet, waitForNodes } from '../support/node-fleet.js';
import { startServerProcess } from '../support/server-process.js';

// Six real clients and a server on two cores: about a minute alone.
t.setTimeout(300_000);

let server = await startServerProcess(t, {
  settings: {
    server_name: '127.0.0.1',
    queue_listen_address: 'tcp://127.0.0.1',
    heartbeat_interval: 200,
    offline_threshold: 3,
    online_threshold: 2,
    voting_timeout: 5,
  },
});
const admin = await server.client('admin');
const scratch = await mkdtemp(join(tmpdir(), 'infra-rollout-'));
t.teardown(() => rm(scratch, { recursive: true, force: true }));
const home = join(scratch, 'home');
await mkdir(home);

const NAMES = ['node1', 'node2', 'node3', 'node4', 'node5', 'node6'];
const nodes = await startNodeFleet(t, {
  serverUrl: server.url,
  validationKey: join(server.dataDir, 'default-validator.pem'),
  dir: join(scratch, 'nodes'),
  // The waves take the nodes by name: node1, then node2 and node3, then the rest. The second wave's fail.
  names: [...NAMES].reverse(),
  whitelist: (name) => ({
    deploy: name === 'node2' || name === 'node3' ? 'echo "broken on $PUSH_NODE_NAME" >&2; exit 4' : 'echo deployed',
    ok: 'echo ok',
  }),
});
const byName = new Map(nodes.map((n) => [n.name, n]));
const cli = cliWith(join(server.dataDir, 'config.rb'), scratch, home);
const FAST = ['--poll-interval', '0.1'];
// Between the waves of the kill -9 case: the restart and the nodes' return fit in it on a busy machine.
const PAUSE_S = 8;
const ready = () => waitForNodes(admin, nodes, 'available');

t.test('a rollout whose second wave fails stops there: the third never starts', async (t) => {
  await ready();
  const r = await cli(
    ['job', 'start', 'deploy', ...NAMES, '--waves', '1,2,100%', '--max-failures', '1', '--verbose', ...FAST],
    120_000,
  );
  t.equal(r.code, 1, show(r));
  t.equal(r.stderr, 'ERROR: Job max_failures_exceeded: 2 of 6 nodes failed, 3 skipped\n');
  const id = jobIdOf(r);
  t.match(r.stdout, /^\d\d:\d\d:\d\d wave 1 start \(1 nodes\)$/m, 'job watch says each wave start');
  t.match(r.stdout, /^\d\d:\d\d:\d\d wave 2 end complete \(2 failures\)$/m, 'and each wave end');
  t.notMatch(r.stdout, /wave 3 start/, 'wave three never started');
  t.match(r.stdout, /^Status: +max_failures_exceeded$/m);
  t.match(r.stdout, /^Rollout: +wave 2 of 3, 2 failures \(max_failures 1\), pause 0 seconds$/m);
  t.match(r.stdout, /^1 +complete +node1 +1 /m, 'the wave table');
  t.match(r.stdout, /^2 +complete +node2, node3 +2 /m);
  t.match(r.stdout, /^3 +skipped +node4, node5, node6 +3 +- +-$/m);
  t.match(r.stdout, /^node4 +skipped /m);

  const job = jobSchema.parse(await admin.call('GET', `/organizations/default/pushy/jobs/${id}`));
  t.same(job.nodes, { succeeded: ['node1'], failed: ['node2', 'node3'], skipped: ['node4', 'node5', 'node6'] });
  t.same(
    job.rollout?.waves.map((w) => [w.status, w.nodes]),
    [
      ['complete', ['node1']],
      ['complete', ['node2', 'node3']],
      ['skipped', ['node4', 'node5', 'node6']],
    ],
  );
  const wave1 = job.rollout?.waves[0];
  const wave2 = job.rollout?.waves[1];
  t.ok(wave1?.ended_at !== null && wave2?.started_at !== null, 'the first waves have their times');
  for (const name of ['node4', 'node5', 'node6'])
    t.notMatch(await byName.get(name)?.log(), new RegExp(`job ${id}`), `${name} never heard of the job`);
  t.match(await byName.get('node2')?.log(), new RegExp(`job ${id}: committed`), 'node2 ran in its wave');
});

t.test('an abort during the pause between waves starts none after it', async (t) => {
  await ready();
  const r = await cli(['job', 'start', 'ok', ...NAMES, '--waves', '2', '--pause', '120', '--nowait']);
  t.equal(r.code, 0, show(r));
  const id = jobIdOf(r);
  const pausing = await until(
    'the first wave to end and the pause to begin',
    async () => {
      const job = jobSchema.parse(await admin.call('GET', `/organizations/default/pushy/jobs/${id}`));
      return job.rollout?.next_wave_at != null ? job : undefined;
    },
    60_000,
  );
  t.equal(pausing.status, 'running', 'the job runs on between waves');
  t.same(pausing.nodes, { waiting: ['node3', 'node4', 'node5', 'node6'], succeeded: ['node1', 'node2'] });

  const abort = await cli(['job', 'abort', id]);
  t.equal(abort.code, 0, show(abort));
  const job = await cliWaitForJob(cli, id, 'aborted');
  t.same(job.nodes, { succeeded: ['node1', 'node2'], skipped: ['node3', 'node4', 'node5', 'node6'] });
  t.same(
    job.rollout?.waves.map((w) => w.status),
    ['complete', 'skipped', 'skipped'],
  );
  t.equal(job.rollout?.next_wave_at, null, 'no wave is due any more');
  for (const name of ['node3', 'node4', 'node5', 'node6'])
    t.notMatch(await byName.get(name)?.log(), new RegExp(`job ${id}`), `${name} never heard of the job`);
});

t.test('kill -9 of the server during the pause: restarted, it starts the next wave when it was due', async (t) => {
  await ready();
  const r = await cli(['job', 'start', 'ok', ...NAMES, '--waves', '3', '--pause', String(PAUSE_S), '--nowait']);
  t.equal(r.code, 0, show(r));
  const id = jobIdOf(r);
  const get = async () => jobSchema.parse(await admin.call('GET', `/organizations/default/pushy/jobs/${id}`));
  const pausing = await until(
    'the first wave to end and the pause to begin',
    async () => {
      const job = await get();
      return job.rollout?.next_wave_at != null ? job : undefined;
    },
    60_000,
  );
  process.kill(server.pid, 'SIGKILL');
  server = await server.restart();
  const restored = await get();
  t.equal(restored.rollout?.next_wave_at, pausing.rollout?.next_wave_at, 'the pause as it was stored');
  t.same(restored.nodes, { succeeded: ['node1', 'node2', 'node3'], waiting: ['node4', 'node5', 'node6'] });
  const job = await cliWaitForJob(cli, id, 'complete');
  t.same(job.nodes, { succeeded: NAMES }, 'the second wave ran on the nodes, back with the restarted server');
  const due = Date.parse(pausing.rollout?.next_wave_at ?? '');
  const started = Date.parse(job.rollout?.waves[1]?.started_at ?? '');
  t.ok(started >= due, `the second wave started once due (${job.rollout?.waves[1]?.started_at})`);
});

t.test('a rollout the job has too few nodes for is refused, naming the field', async (t) => {
  const r = await cli(['job', 'start', 'ok', 'node1', 'node2', '--waves', '1,10%,100%']);
  t.equal(r.code, 1, show(r));
  t.match(r.stderr, /rollout\.waves' invalid: 3 waves need more nodes than the 2 of the job/);
  const zero = await cli(['job', 'start', 'ok', 'node1', '--waves', '0']);
  t.equal(zero.code, 2, show(zero));
  t.match(zero.stderr, /--waves: '0' is not a node count or a percentage/);
});
