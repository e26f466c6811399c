// Crash policies of the job actors and node followers, on a real actor tree over a real file store: a job whose machine
// throws ends `crashed`, saved, with its nodes told to abort, and requests about it are answered at once; a
// node follower whose machine throws goes on from its last state. The transport here only records what the actors
// ask it to send: what reaches a node over ZeroMQ is tested in push-jobs.test.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Ref } from 'nact';
import t, { type Test } from 'tap';
import type { OrgOp } from '../../actors/org/handlers.js';
import { newOrgWrites } from '../../actors/org/new-org.js';
import { persistWrites } from '../../actors/org/org-store.js';
import { newJob } from '../../actors/push/job-machine.js';
import { loadJob } from '../../actors/push/job-store.js';
import { NO_LAG, type OutboundMessage, type PushTransport, type ServerLag } from '../../actors/push/ports.js';
import { SOLE_PROCESS } from '../../src/cluster/push-cluster.js';
import type { Reply, RequestContext } from '../../actors/shared/reply.js';
import { ask, startSystem, type InfraSystem } from '../../actors/system.js';
import { jobSchema } from '../../src/api/push-jobs.js';
import { generateKeyPair } from '../../src/auth/rsa-keys.js';
import { Counters } from '../../src/lib/counters.js';
import { jobsCollection, nodeStatesCollection } from '../../src/store/collections.js';
import { FileStore } from '../../src/store/file-store.js';
import { until } from '../support/deadline.js';
import { LEVEL, recordingLogger } from '../support/logs.js';

const ORG = 'acme';
const INTERVAL = 1000;
const superuser: RequestContext = {
  requestor: { kind: 'user', name: 'pivotal', superuser: true, serverAdmin: true, validator: false },
  baseUrl: 'http://test',
  apiVersion: 1,
  authKey: '',
  authPublicKey: '',
};

const SETTINGS = {
  voting_timeout: 60,
  heartbeat_interval: INTERVAL,
  offline_threshold: 3,
  online_threshold: 2,
  job_retention_days: 30,
};

class RecordingTransport implements PushTransport {
  readonly sent: Array<{ node: string; message: OutboundMessage }> = [];
  send(_org: string, node: string, message: OutboundMessage): void {
    this.sent.push({ node, message });
  }
  openSession(): never {
    throw new Error('no sessions here');
  }
  nodeDown(): void {}
  describe() {
    return {
      heartbeat_addr: 'tcp://127.0.0.1:1',
      command_addr: 'tcp://127.0.0.1:2',
      curve_public_key: null,
      incarnation_id: '00000000-0000-4000-8000-000000000000',
      max_message_skew: 300,
      max_body_size: 65536,
      server_name: '127.0.0.1',
    };
  }
}

/** The transport's other ports, which these actors use without a node connected. */
const QUIET = {
  orgs: { openOrg: async () => {}, closeOrg: () => {}, releaseOrg: () => {} },
  settings: SETTINGS,
  lag: { lag: (): ServerLag => NO_LAG, downDeferred: () => {}, downMarked: () => {} },
  cluster: SOLE_PROCESS,
  votes: { recovered: () => {} },
};

async function setup(t: Test) {
  const dir = await mkdtemp(join(tmpdir(), 'infra-supervision-'));
  const store = new FileStore(join(dir, 'store'));
  const key = await generateKeyPair();
  await persistWrites(store, ORG, newOrgWrites(ORG, 'Acme', key.publicKeyPem, Date.now()));
  const transport = new RecordingTransport();
  const counters = new Counters();
  const { logger, records } = recordingLogger('warn');
  let system: InfraSystem | undefined;
  t.teardown(async () => {
    await system?.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const start = async () => {
    system = await startSystem(store, { transport, ...QUIET }, { counters, log: logger });
    system.resumePush(); // as the push-jobs hub does before it reads
    return system;
  };
  const request = (s: InfraSystem, op: OrgOp) => {
    const org = s.org(ORG);
    if (!org) throw new Error('no organization');
    // A crash policy answers at once; a hang would be a 30 s timeout, so a short one proves the point.
    return ask(org, (replyTo: Ref<Reply>) => ({ type: 'request' as const, ctx: superuser, op, replyTo }), 5000);
  };
  return { store, transport, counters, records, start, request };
}

t.test('a job whose machine throws ends crashed, saved, its nodes told to abort, and still answers', async (t) => {
  const { store, transport, counters, records, start, request } = await setup(t);
  // A snapshot whose invariants are broken (a node still `new` in a running job), as a hand-edited store or a
  // buggy older version could leave it: restoring it makes the machine throw.
  const job = newJob({
    id: 'j1',
    command: 'chef-client',
    nodes: ['up-1', 'gone-1'],
    run_timeout: 60,
    voting_timeout: 60,
    quorum: 2,
    at: Date.now(),
  });
  job.status = 'running';
  job.nodes['up-1'] = 'running';
  job.run_deadline = Date.now() + 60_000;
  await store.put(jobsCollection(ORG), job.id, job);
  await store.put(nodeStatesCollection(ORG), 'up-1', {
    node_name: 'up-1',
    status: 'up',
    updated_at: Date.now(),
    incarnation: 'x',
  });

  const system = await start();
  // The snapshot is one of an earlier version, every node inside the document: it loads all the same.
  const saved = await until(
    'the crashed job to be saved',
    async () => {
      const job = await loadJob(store, ORG, 'j1');
      return job?.status === 'crashed' ? job : undefined;
    },
    5000,
  );
  t.match(saved, { status: 'crashed', nodes: { 'up-1': 'crashed', 'gone-1': 'unavailable' } });
  t.same(
    transport.sent
      .filter((s) => s.message.type === 'abort')
      .map((s) => [s.node, s.message.job_id])
      .sort(),
    [
      ['gone-1', 'j1'],
      ['up-1', 'j1'],
    ],
    'every node of the job is told to let it go',
  );
  t.equal(counters.get('actor_crashes', 'job'), 1, 'the crash is counted');
  t.match(
    records.find((r) => r.level === LEVEL.error),
    { actor: 'job-j1', msg: /crash policy/ },
    'and logged as an error naming the actor',
  );

  const got = await request(system, { type: 'get_job', id: 'j1' });
  t.equal(got.status, 200);
  t.match(jobSchema.parse(got.body), { status: 'crashed', nodes: { crashed: ['up-1'], unavailable: ['gone-1'] } });
  const aborted = await request(system, { type: 'abort_job', id: 'j1' });
  t.equal(aborted.status, 409, 'a crashed job is over: aborting it is refused at once');
  const list = await request(system, { type: 'list_jobs', offset: 0, limit: 100 });
  t.match(list.body, [{ id: 'j1', status: 'crashed' }], 'the job list shows it crashed');
});

t.test('a node follower whose machine throws goes on from its last state', async (t) => {
  const { counters, start, request } = await setup(t);
  const system = await start();
  const node = system.nodeFollower(ORG, 'n1');
  if (!node) throw new Error('no node follower');
  const beat = (at: number) =>
    node.tell({ type: 'heartbeat', at, incarnation: 'inc-1', job: null, job_state: 'idle', sequence: at });
  const now = Date.now();
  beat(now);
  beat(now + INTERVAL);
  const state = async () => (await request(system, { type: 'get_node_state', node: 'n1' })).body;
  await until('n1 to be up', async () => ((await state()) as { status?: string }).status === 'up' || undefined, 5000);

  node.tell({ type: 'heartbeat', at: Number.NaN, incarnation: 'inc-1', job: null, job_state: 'idle', sequence: 1 });
  await until('the crash to be counted', () => counters.get('actor_crashes', 'node') === 1 || undefined, 5000);
  beat(now + 2 * INTERVAL);
  t.match(await state(), { node_name: 'n1', status: 'up' }, 'still up: the actor kept its state');
  // It still follows its node: silence past the offline window takes it down as usual.
  await until(
    'n1 to go down once silent',
    async () => ((await state()) as { status?: string }).status === 'down' || undefined,
    8000,
  );
  t.pass('the restarted actor still detects silence');
});
