// An organization moves between servers on one store, as between the processes of a cluster: the server that
// releases it stops answering for it and leaves everything it accepted in the store, and the server that adopts
// it serves its objects, clients, members and jobs in flight from there on. The moves are made by hand here, on
// files; on Redis the members of a cluster make them as their leases come and go (test/e2e/cluster.test.ts).
import type { Ref } from 'nact';
import t from 'tap';
import type { Reply, RequestContext } from '../../actors/shared/reply.js';
import { ask } from '../../actors/system.js';
import { NODE_STATES_MAP, nodeStatesCollection, orgCollection } from '../../src/store/collections.js';
import { createClient, expectStatus, keyPair } from '../support/api-fixtures.js';
import { getJob, startJob, waitForJob } from '../support/push-api.js';
import { startTestServer } from '../support/server.js';
import { ack, ignore, poll, startTestNode } from '../support/test-node.js';

// Eight intervals of silence before `down`: short enough for quick tests, long enough that a machine busy with
// other test files does not see nodes flap.
const FAST = { heartbeat_interval: 100, offline_threshold: 8, online_threshold: 2, voting_timeout: 2 };
const DEFAULT = '/organizations/default';

const PIVOTAL: RequestContext = {
  requestor: { kind: 'user', name: 'pivotal', superuser: true, serverAdmin: true, validator: false },
  baseUrl: 'http://test',
  apiVersion: 1,
  authKey: '',
  authPublicKey: '',
};

t.test('released on one server and adopted on another, an organization is served by the second only', async (t) => {
  const a = await startTestServer(t, 'file', FAST);
  const b = await a.beside();
  expectStatus(t, await b.admin.request('GET', `${DEFAULT}/nodes`), 404, 'the second server does not serve it yet');

  await createClient(t, a, 'default', 'web-client', 1);
  expectStatus(t, await a.admin.request('POST', `${DEFAULT}/nodes`, { name: 'web-1' }), 201);

  await a.running.system.releaseOrg('default');
  t.equal(a.running.system.org('default'), undefined, 'the first server holds no actor for it');
  expectStatus(t, await a.admin.request('GET', `${DEFAULT}/nodes/web-1`), 404, 'the first server answers 404');

  t.equal(await b.running.system.adoptOrg('default'), true, 'the second server adopts it');
  expectStatus(t, await b.admin.request('GET', `${DEFAULT}/nodes/web-1`), 200, 'a node written through the first');
  expectStatus(t, await b.admin.request('GET', `${DEFAULT}/clients/web-client`), 200, 'a client written there');
  const asWeb = b.as('web-client', (await keyPair(1)).privateKeyPem);
  expectStatus(t, await asWeb.request('GET', `${DEFAULT}/nodes/web-1`), 200, 'the client authenticates on the second');
  const orgs = await b.admin.request('GET', '/users/admin/organizations');
  t.match(orgs, { status: 200, body: [{ organization: { name: 'default' } }] }, "admin's membership is known there");

  expectStatus(t, await a.admin.request('GET', `${DEFAULT}/clients/web-client`), 404, 'the first still answers 404');
  t.same(a.running.system.orgNames(), [], 'the first server serves no organization');
  t.same(b.running.system.orgNames(), ['default'], 'the second serves it');
});

t.test('adopting and releasing are harmless when repeated, and a missing organization is not adopted', async (t) => {
  const s = await startTestServer(t, 'file', FAST);
  const { system } = s.running;
  t.equal(await system.adoptOrg('nowhere'), false, 'the store holds no organization of that name');
  t.equal(system.org('nowhere'), undefined);
  const ref = system.org('default');
  t.equal(await system.adoptOrg('default'), true, 'adopting an organization served already');
  t.equal(system.org('default'), ref, 'leaves its actor as it was');

  const release = system.releaseOrg('default');
  t.equal(system.org('default'), undefined, 'not found from the moment the release is asked for');
  await Promise.all([release, system.releaseOrg('default')]);
  await system.releaseOrg('default');
  expectStatus(t, await s.admin.request('GET', `${DEFAULT}/nodes`), 404, 'released');

  // Asked together, they run one after the other in the order asked.
  const results = await Promise.all([
    system.adoptOrg('default'),
    system.releaseOrg('default'),
    system.adoptOrg('default'),
    system.adoptOrg('default'),
  ]);
  t.same(results, [true, undefined, true, true]);
  expectStatus(t, await s.admin.request('POST', `${DEFAULT}/nodes`, { name: 'back' }), 201, 'served again');
  expectStatus(t, await s.admin.request('GET', `${DEFAULT}/nodes/back`), 200);
});

t.test('a release waits for the writes accepted before it', async (t) => {
  const s = await startTestServer(t, 'file', FAST);
  const { system } = s.running;
  const ref = system.org('default');
  if (!ref) throw new Error('the default organization is not served');
  const names = Array.from({ length: 20 }, (_, i) => `role-${i}`);
  const answers = names.map((name) =>
    ask(ref, (replyTo: Ref<Reply>) => ({
      type: 'request' as const,
      ctx: PIVOTAL,
      op: { type: 'create_object' as const, kind: 'roles' as const, name, body: { name } },
      replyTo,
    })),
  );
  await system.releaseOrg('default');
  const stored = await Promise.all(names.map((name) => system.store.get(orgCollection('default', 'roles'), name)));
  t.same(
    stored.map((doc) => (doc as { name?: string } | undefined)?.name),
    names,
    'every role asked for before the release is stored once it returns',
  );
  t.same(
    (await Promise.all(answers)).map((reply) => reply.status),
    names.map(() => 201),
    'and every request was answered',
  );
});

t.test('a job in flight moves with its organization and ends on the server that adopted it', async (t) => {
  const a = await startTestServer(t, 'file', FAST);
  const b = await a.beside();
  const n = await startTestNode(a, 'mover-1', { run: ack() });
  t.teardown(() => n.stop());
  const id = await startJob(a.admin, { command: 'chef-client', nodes: ['mover-1'], run_timeout: 60 });
  await waitForJob(a.admin, id, (job) => job.nodes.running?.includes('mover-1') === true);

  await a.running.system.releaseOrg('default');
  expectStatus(t, await a.admin.request('GET', `${DEFAULT}/pushy/jobs/${id}`), 404, 'the first server let it go');
  const saved = await b.running.system.store.getFields(nodeStatesCollection('default'), NODE_STATES_MAP);
  t.match(saved.get('mover-1'), { status: 'up' }, 'the release stored the node up');

  t.equal(await b.running.system.adoptOrg('default'), true);
  n.moveTo(b);
  const beats = n.received.filter((m) => m.type === 'heartbeat').length;
  const heard = await n.waitFor('heartbeat', {
    after: beats,
    where: (m) => m.incarnation_id === b.running.hub.incarnationId,
  });
  t.ok(heard, 'the node hears the second server with the session key it had');
  t.equal((await getJob(b.admin, id)).status, 'running', 'the job runs on, now on the second server');

  n.finish();
  const job = await waitForJob(b.admin, id, 'complete');
  t.same(job.nodes, { succeeded: ['mover-1'] }, 'the answer sent to the second server completes the job');
  await poll('mover-1 available on the second server', async () => {
    const res = await b.admin.request('GET', `${DEFAULT}/pushy/node_states/mover-1`);
    const body = res.body as { status?: string; availability?: string };
    return body.status === 'up' && body.availability === 'available' ? true : undefined;
  });
  t.same(n.problems, [], 'every server message verified');
});

t.test('a job still voting asks its undecided node again from the server that adopted it', async (t) => {
  // Voting lasts long enough for the move, on a machine busy with other test files.
  const a = await startTestServer(t, 'file', { ...FAST, voting_timeout: 60 });
  const b = await a.beside();
  const n = await startTestNode(a, 'voter-1', { commit: ignore() });
  t.teardown(() => n.stop());
  const id = await startJob(a.admin, { command: 'chef-client', nodes: ['voter-1'] });
  await n.waitFor('commit', { where: (m) => m.job_id === id });
  n.script = {}; // the commit was lost on the way; the next one is answered

  await a.running.system.releaseOrg('default');
  t.equal(await b.running.system.adoptOrg('default'), true);
  n.moveTo(b);
  const job = await waitForJob(b.admin, id, 'complete');
  t.same(job.nodes, { succeeded: ['voter-1'] }, 'the node voted, ran and succeeded on the second server');
  t.same(n.problems, [], 'every server message verified');
});
