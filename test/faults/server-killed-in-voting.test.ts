// kill -9 of the server while a job is voting, with real clients, one of which was frozen (SIGSTOP) when the
// commit went out: after the restart the job asks the nodes still undecided again once they are heard, and runs,
// instead of waiting out voting_timeout and failing its quorum.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startNodeFleet, waitForNodes, type FleetNode } from '../support/node-fleet.js';
import { isFinished } from '../../src/push/job-states.js';
import { until } from '../support/deadline.js';
import { getJob } from '../support/push-api.js';
import { startServerProcess } from '../support/server-process.js';

const VOTING_TIMEOUT_S = 40;

t.test('a commit lost with the server is sent again after its restart', async (t) => {
  // Two races against the offline window, which ten intervals (2 s) leave room for on a busy machine where three
  // (600 ms) once were too few: steady's vote must be stored before frozen, silent from the moment it is frozen,
  // counts as down; and after the restart each node must be heard within the window the server gives the nodes
  // that were up, or it counts as down and is aborted when it returns (frozen is woken only once the server
  // answers, then reconnects with a new session).
  let server = await startServerProcess(t, {
    settings: { heartbeat_interval: 200, offline_threshold: 10, voting_timeout: VOTING_TIMEOUT_S },
  });
  const admin = await server.client('admin');
  const dir = await mkdtemp(join(tmpdir(), 'killed-in-voting-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const nodes = (await startNodeFleet(t, {
    serverUrl: server.url,
    validationKey: join(server.dataDir, 'default-validator.pem'),
    dir,
    names: ['steady', 'frozen'],
    whitelist: () => ({ hello: 'echo hello' }),
  })) as [FleetNode, FleetNode];
  const [steady, frozen] = nodes;
  await waitForNodes(admin, nodes, 'available');

  frozen.freeze();
  const started = await admin.request('POST', '/organizations/default/pushy/jobs', {
    command: 'hello',
    nodes: ['steady', 'frozen'],
  });
  const id = (started.body as { id: string }).id;
  // Steady votes and its vote is stored; frozen cannot vote.
  const voting = await until(
    "steady's vote to be stored",
    async () => {
      const j = await getJob(admin, id);
      return j.nodes.ready?.includes('steady') ? j : undefined;
    },
    20_000,
    100,
  );
  t.equal(voting.status, 'voting', 'the job still votes, waiting for frozen');
  process.kill(server.pid, 'SIGKILL');
  server = await server.restart();
  frozen.resume();

  const job = await until(
    'the job to end',
    async () => {
      const j = await getJob(admin, id);
      return isFinished(j.status) ? j : undefined;
    },
    (VOTING_TIMEOUT_S + 5) * 1000,
    200,
  ).catch(async (e: unknown) => {
    t.comment(server.output(), await steady.log(), await frozen.log());
    throw e;
  });
  // Had the commit not been sent again, frozen would never vote and the job would end quorum_failed at
  // voting_timeout: `complete` on both nodes is the proof that it was.
  t.equal(job.status, 'complete', 'the job runs to its end, without waiting out voting_timeout');
  t.same(job.nodes, { succeeded: ['frozen', 'steady'] }, 'on both nodes');
  if (job.status !== 'complete') t.comment(server.output(), await steady.log(), await frozen.log());
});
