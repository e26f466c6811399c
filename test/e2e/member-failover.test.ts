// A cluster without a balancer: each member's API at its own URL, and every node's client.rb naming one member.
// That member dies (kill -9) with results its nodes had written to it: the nodes fail over to the members their
// config answers listed, report their results again, and the job completes. Real server processes on a private
// Redis, real push-jobs-client processes.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { curveKeyPair } from 'zeromq';
import { preferredGateway } from '../../src/cluster/ownership.js';
import { partitionName, partitionOf } from '../../src/store/partitions.js';
import {
  everyPartitionServed,
  jobEnd,
  settledOwnerOf,
  startCluster,
  startJob,
  type Cluster,
} from '../support/cluster.js';
import { until } from '../support/deadline.js';
import { startNodeFleet, waitForNodes, type FleetNode } from '../support/node-fleet.js';
import { getJob } from '../support/push-api.js';
import type { ServerProcess } from '../support/server-process.js';

const DEFAULT_PARTITION = partitionName(partitionOf('default'));

/** The member ids of the servers, in their order, once every member sees every other. */
async function memberIds(c: Cluster): Promise<string[]> {
  const all = await until('every member to see the others', everyPartitionServed(c), 30_000);
  return all.map((s) => s?.member ?? '');
}

/** The heartbeat address a client connected to last, from its log. */
function lastGateway(log: string): string | undefined {
  return [...log.matchAll(/connected to (tcp:\/\/\S+) and /g)].at(-1)?.[1];
}

async function logsOf(nodes: readonly FleetNode[]): Promise<string[]> {
  return Promise.all(nodes.map(async (n) => `--- ${n.name}\n${await n.log()}`));
}

t.test(
  'the member its nodes name is killed with their results: they move to the members they learned, report again, and the job completes',
  async (t) => {
    const c = await startCluster(t, 3);
    const owner = await settledOwnerOf(c.servers, DEFAULT_PARTITION);
    const ids = await memberIds(c);
    const victim = c.servers.find((s) => s !== owner) as ServerProcess;
    const victimId = ids[c.servers.indexOf(victim)];
    // Nodes whose gateway will be the victim (rendezvous hashing over the live members, as the owner picks), and
    // nodes connected elsewhere: all of them know the victim's URL only.
    const candidates = Array.from({ length: 60 }, (_, i) => `fo${i}`);
    const gatewayOf = (name: string) => preferredGateway('default', name, ids);
    const behindVictim = candidates.filter((n) => gatewayOf(n) === victimId).slice(0, 3);
    const elsewhere = candidates.filter((n) => gatewayOf(n) !== victimId).slice(0, 2);
    const names = [...behindVictim, ...elsewhere].sort();

    const dir = await mkdtemp(join(tmpdir(), 'failover-nodes-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const go = join(dir, 'go');
    const nodes = await startNodeFleet(t, {
      serverUrl: victim.url,
      validationKey: join(c.dataDir, 'default-validator.pem'),
      dir,
      names,
      // `hold` runs until the test says go: every result then leaves at a moment the test chooses.
      whitelist: () => ({ hold: `while [ ! -e '${go}' ]; do sleep 0.05; done`, hello: 'echo hello' }),
    });
    const admin = await c.admin(owner);
    await waitForNodes(admin, nodes, 'available', 40_000);
    const victimBeats = `tcp://127.0.0.1:${victim.ports.heartbeat}`;
    for (const n of nodes)
      t.equal(
        lastGateway(await n.log()) === victimBeats,
        behindVictim.includes(n.name),
        `${n.name} ${behindVictim.includes(n.name) ? 'is' : 'is not'} connected to the member it names`,
      );

    const config = await admin.request(
      'GET',
      `/organizations/default/pushy/config/${names[0]}?ccpk=${encodeURIComponent(curveKeyPair().publicKey)}`,
    );
    t.strictSame(
      (config.body as { server_urls?: unknown }).server_urls,
      c.servers.map((s) => s.url).sort(),
      'a config answer lists the API URL of every live member',
    );

    const id = await startJob(admin, 'hold', names);
    await until(
      'every node to run the command',
      async () => ((await getJob(admin, id)).nodes.running?.length === names.length ? true : undefined),
      20_000,
    );
    // Frozen, the victim takes what its nodes write and passes none of it on; killed, it loses it.
    process.kill(victim.pid, 'SIGSTOP');
    await writeFile(go, '');
    await until(
      'every client to report its result',
      async () => ((await logsOf(nodes)).every((l) => l.includes(`job ${id}: succeeded`)) ? true : undefined),
      20_000,
    );
    process.kill(victim.pid, 'SIGKILL');

    const job = await jobEnd(admin, id, 60_000).catch(async (e: unknown) => {
      t.comment(...(await logsOf(nodes)));
      throw e;
    });
    t.equal(job.status, 'complete', 'the job ends complete');
    t.same(job.nodes, { succeeded: names }, 'every node succeeded, as its client reported');
    if (job.nodes.succeeded?.length !== names.length) t.comment(...(await logsOf(nodes)));

    const logs = new Map(await Promise.all(nodes.map(async (n) => [n.name, await n.log()] as const)));
    const others = c.servers.filter((s) => s !== victim).map((s) => s.url);
    for (const name of behindVictim) {
      const log = logs.get(name) ?? '';
      t.ok(
        others.some((url) => log.includes(`asking ${url} from now on`)),
        `${name} moved from the member it names to one its config answer listed`,
      );
      const resent = log.indexOf(`job ${id}: reporting succeeded again`);
      t.ok(resent >= 0, `${name} reported its result again`);
      t.match(log.slice(resent), 'received ack_result on the command channel', 'and the server acknowledged it');
      t.not(lastGateway(log), victimBeats, `${name} is connected to another gateway`);
    }

    await waitForNodes(admin, nodes, 'available', 40_000);
    const again = await jobEnd(admin, await startJob(admin, 'hello', names), 30_000);
    t.equal(again.status, 'complete', 'a job started afterwards completes');
    t.same(again.nodes, { succeeded: names }, 'on every node, none of which can reach the member it names');
    if (again.nodes.succeeded?.length !== names.length)
      t.comment(JSON.stringify(again), owner.output(), ...(await logsOf(nodes)));
    for (const n of nodes) await n.stop();
  },
);
