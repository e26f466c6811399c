// Three infra-server processes on one private Redis form one cluster: they share the partitions, any of them
// answers any request (passing it to the owner), and when the owner of an organization is killed (-9) or frozen
// past its lease (SIGSTOP), another takes the organization over and its job ends as it would have, with real
// push-jobs-client processes following the owner.
import t from 'tap';
import { partitionName, partitionOf } from '../../src/store/partitions.js';
import { clusterOf, fleet, jobEnd, ownerOf, startCluster, startJob } from '../support/cluster.js';
import { until } from '../support/deadline.js';
import { waitForNodes } from '../support/node-fleet.js';
import { getJob } from '../support/push-api.js';
import type { ServerProcess } from '../support/server-process.js';

const DEFAULT_PARTITION = partitionName(partitionOf('default'));

t.test('three processes share the partitions and any of them answers for any organization', async (t) => {
  const c = await startCluster(t, 3);
  const statuses = await until(
    'every partition to be served',
    async () => {
      const all = await Promise.all(c.servers.map(clusterOf));
      const held = all.reduce((n, s) => n + (s?.partitions ?? 0), 0);
      // The member that set the cluster up holds every partition until it has handed the others theirs.
      return held === 65 && all.every((s) => (s?.partitions ?? 0) > 0) ? all : undefined;
    },
    30_000,
  );
  for (const s of statuses) {
    t.equal(s?.members.length, 3, 'each server sees the three members');
    t.ok((s?.partitions ?? 0) > 0, `${s?.member} serves ${s?.partitions} partitions`);
  }
  // Started together, they raced for first start: one of them made it, once.
  for (const s of c.servers) {
    const me = await (await c.pivotal(s)).request('GET', '/users/pivotal');
    t.equal(me.status, 200, 'the one pivotal key signs in on every process');
    const clients = await (await c.admin(s)).request('GET', '/organizations/default/clients');
    t.same(
      Object.keys(clients.body as object).filter((n) => n === 'default-validator'),
      ['default-validator'],
      'one default organization with its validator',
    );
  }
  const owner = await ownerOf(c.servers, DEFAULT_PARTITION);
  const others = c.servers.filter((s) => s !== owner);
  // Writes and reads through processes that do not own the organization.
  const [first, second] = others as [ServerProcess, ServerProcess];
  const created = await (
    await c.admin(first)
  ).request('POST', '/organizations/default/nodes', {
    name: 'through-first',
    json_class: 'Chef::Node',
    chef_type: 'node',
  });
  t.equal(created.status, 201, 'a node created through a process that does not own the organization');
  t.match(created.body, { uri: `${first.url}/organizations/default/nodes/through-first` }, 'named at its address');
  const read = await (await c.admin(second)).request('GET', '/organizations/default/nodes/through-first');
  t.equal(read.status, 200, 'and read through another');
  const orgs = ['alpha', 'beta', 'gamma', 'delta'];
  for (const name of orgs) {
    const made = await (await c.pivotal(first)).request('POST', '/organizations', { name, full_name: name });
    t.equal(made.status, 201, `organization ${name} created through one process`);
  }
  const listed = await (await c.pivotal(second)).request('GET', '/organizations');
  t.same(Object.keys(listed.body as object).sort(), [...orgs, 'default'].sort(), 'every process lists them all');
  const user = await (await c.pivotal(second)).request('GET', '/users/admin');
  t.equal(user.status, 200, 'users are answered by whichever process is asked');

  const nodes = await fleet(t, c, first, ['n1', 'n2']);
  const id = await startJob(await c.admin(second), 'hello', ['n1', 'n2']);
  const job = await jobEnd(await c.admin(first), id, 30_000);
  t.equal(job.status, 'complete', 'a job started through one process completes');
  t.same(job.nodes, { succeeded: ['n1', 'n2'] });
  for (const n of nodes) await n.stop();
});

t.test('kill -9 of the owner while its nodes run a command: another takes over and the job ends', async (t) => {
  const c = await startCluster(t, 3);
  const owner = await ownerOf(c.servers, DEFAULT_PARTITION, 30_000);
  const [entry] = c.servers.filter((s) => s !== owner) as [ServerProcess];
  const nodes = await fleet(t, c, entry, ['k1', 'k2', 'k3']);
  const admin = await c.admin(entry);
  const id = await startJob(admin, 'nap', ['k1', 'k2', 'k3']);
  await until(
    'the nodes to run the command',
    async () => ((await getJob(admin, id)).status === 'running' ? true : undefined),
    15_000,
  );
  process.kill(owner.pid, 'SIGKILL');
  const killedAt = Date.now();
  const survivors = c.servers.filter((s) => s !== owner);
  const next = await ownerOf(survivors, DEFAULT_PARTITION, 20_000);
  t.comment(`${DEFAULT_PARTITION} served again ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
  const job = await jobEnd(admin, id, 40_000).catch(async (e: unknown) => {
    t.comment(next.output(), ...(await Promise.all(nodes.map((n) => n.log()))));
    throw e;
  });
  t.equal(job.status, 'complete', 'the job ends as it would have');
  t.same(job.nodes, { succeeded: ['k1', 'k2', 'k3'] }, 'with every reply the clients sent');
  if (job.nodes.succeeded?.length !== 3) t.comment(next.output(), ...(await Promise.all(nodes.map((n) => n.log()))));
  await waitForNodes(admin, nodes, 'available', 30_000);
  const again = await jobEnd(admin, await startJob(admin, 'hello', ['k1', 'k2', 'k3']), 30_000);
  t.equal(again.status, 'complete', 'and the nodes take the next job from the new owner');
});

t.test('an owner frozen past its lease writes nothing once another took over, and lets go when it wakes', async (t) => {
  const c = await startCluster(t, 2);
  const owner = await ownerOf(c.servers, DEFAULT_PARTITION, 30_000);
  const [other] = c.servers.filter((s) => s !== owner) as [ServerProcess];
  const admin = await c.admin(other);
  const node = (name: string, note: string) => ({
    name,
    json_class: 'Chef::Node',
    chef_type: 'node',
    normal: { note },
  });
  t.equal((await admin.request('POST', '/organizations/default/nodes', node('kept', 'before'))).status, 201);
  process.kill(owner.pid, 'SIGSTOP');
  t.teardown(() => {
    try {
      process.kill(owner.pid, 'SIGCONT');
    } catch {
      // gone already
    }
  });
  await ownerOf([other], DEFAULT_PARTITION, 20_000);
  const put = await admin.request('PUT', '/organizations/default/nodes/kept', node('kept', 'after'));
  t.equal(put.status, 200, 'the new owner takes writes');
  process.kill(owner.pid, 'SIGCONT');
  await until(
    'the woken owner to let the partition go',
    async () => ((await clusterOf(owner))?.held.includes(DEFAULT_PARTITION) === false ? true : undefined),
    15_000,
  );
  // Awake again, it may win the partition back: while the partition moves, a request is told to try again (503
  // with Retry-After), never that the node or its organization is gone.
  const woken = await c.admin(owner);
  const through = await until(
    'an answer other than try-again through the woken process',
    async () => {
      const answer = await woken.request('GET', '/organizations/default/nodes/kept');
      return answer.status === 503 ? undefined : answer;
    },
    15_000,
  );
  t.equal(through.status, 200, 'the node is found through the woken process');
  t.match(
    through.body,
    { normal: { note: 'after' } },
    'asked through the woken process, the new owner answers, and nothing the old one held overwrote it',
  );
});
