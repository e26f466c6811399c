// `processes N`: one infra-server command runs N members of one cluster sharing api_port, each with its own
// ZeroMQ ports; a member killed is started again by the supervising process, and the partitions are all served
// again (what its nodes do then is test/e2e/cluster.test.ts's). On the embedded file store the
// setting is refused, naming it.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { curveKeyPair } from 'zeromq';
import { serverStatusSchema } from '../../src/api/status-schema.js';
import { fleet, jobEnd, startJob } from '../support/cluster.js';
import { until } from '../support/deadline.js';
import { startPrivateRedis } from '../support/private-redis.js';
import { runBin } from '../support/process-run.js';
import { freePortBlock, settingsText, startServerProcess } from '../support/server-process.js';

/** Any member's line: the supervisor's members log with their index after the URL. */
const MEMBER_READY = /^\S+ INFO API listening on (\S+)/m;

t.test('processes 3 starts three members sharing the API port, and one killed comes back', async (t) => {
  const redis = await startPrivateRedis(t);
  const dataDir = await mkdtemp(join(tmpdir(), 'infra-processes-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  // Member i takes the ports of the settings plus 10·i (its own API port: api_port + 10·(i + 1)): a block of 40
  // free ports holds them all.
  const base = await freePortBlock(40);
  const server = await startServerProcess(t, {
    settings: {
      server_heartbeat_port: base,
      command_port: base + 2,
      api_port: base + 3,
      processes: 3,
      redis_url: redis.url,
      data_dir: dataDir,
      lease_ttl: 3,
      heartbeat_interval: 200,
      server_name: '127.0.0.1',
      queue_listen_address: 'tcp://127.0.0.1',
    },
    readyLine: MEMBER_READY,
    startTimeoutMs: 40_000,
  });
  const cluster = async () =>
    serverStatusSchema.parse(await (await fetch(`${server.url}/_status`, { signal: AbortSignal.timeout(5000) })).json())
      .cluster ?? undefined;
  const members = await until(
    'three members serving every partition',
    async () => {
      const c = await cluster().catch(() => undefined);
      const held = c?.members.reduce((n, m) => n + m.partitions, 0);
      return c?.members.length === 3 && held === 65 ? c.members : undefined;
    },
    40_000,
  );
  t.equal(new Set(members.map((m) => m.pid)).size, 3, 'three processes');
  t.equal(new Set(members.map((m) => m.url)).size, 3, 'each with a port of its own for what the others pass on');

  const c = {
    servers: [server],
    dataDir,
    pivotal: async () => server.client('pivotal', await readKey(dataDir, 'pivotal')),
    admin: async () => server.client('admin', await readKey(dataDir, 'admin')),
  };
  const nodes = await fleet(t, c, server, ['p1', 'p2', 'p3', 'p4']);
  const admin = await c.admin();
  const first = await jobEnd(admin, await startJob(admin, 'hello', ['p1', 'p2', 'p3', 'p4']), 30_000);
  t.equal(first.status, 'complete', 'a job runs on nodes spread over the members');
  const config = await admin.request(
    'GET',
    `/organizations/default/pushy/config/p1?ccpk=${encodeURIComponent(curveKeyPair().publicKey)}`,
  );
  t.strictSame(
    (config.body as { server_urls?: unknown }).server_urls,
    [server.url],
    'a config answer names the API port the members share, once, never a member’s own port',
  );
  t.equal(
    (config.body as { gateway_url?: unknown }).gateway_url,
    server.url,
    'and names it as the gateway’s: the members share it',
  );

  const victim = members[1];
  if (!victim) throw new Error('no second member');
  process.kill(victim.pid, 'SIGKILL');
  const after = await until(
    'the killed member to be started again',
    async () => {
      const now = await cluster().catch(() => undefined);
      const back = now?.members.length === 3 && !now.members.some((m) => m.pid === victim.pid);
      return back && now.members.reduce((n, m) => n + m.partitions, 0) === 65 ? now.members : undefined;
    },
    40_000,
  ).catch((e: unknown) => {
    t.comment(server.output());
    throw e;
  });

  t.notOk(
    after.some((m) => m.id === victim.id),
    'a new member took its place',
  );
  for (const n of nodes) await n.stop();
  const stopped = await server.stop();
  t.equal(stopped.code, 0, 'SIGTERM stops the members and the supervisor');
});

t.test('processes above 1 on the file store is refused, naming the setting', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'infra-processes-file-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'push-jobs-server.rb');
  await writeFile(file, settingsText({ api_port: 10003, processes: 2 }));
  const run = await runBin('infra-server', ['-c', file], { cwd: dir });
  t.equal(run.code, 2, 'it does not start');
  t.match(run.stderr, `${file}:2: processes 2 needs redis_url`, 'and names the file, line and setting');
});

function readKey(dataDir: string, name: string): Promise<string> {
  return readFile(join(dataDir, `${name}.pem`), 'utf8');
}
