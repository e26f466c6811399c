// Job answers never wait behind heartbeats: with a flood of heartbeats queued on the heartbeat channel, the server
// reads a node's ack on the command channel and sends the job's run while most of the flood is still unread.
import t from 'tap';
import { startJob, waitForJob } from '../support/push-api.js';
import { startTestServer } from '../support/server.js';
import { ack, poll, startTestNode } from '../support/test-node.js';

/** Heartbeats a node sends at once, just before its ack: far more than a few turns of the event loop read. */
const FLOOD = 20_000;

t.test('a job answer is handled while a heartbeat flood is still queued', async (t) => {
  const s = await startTestServer(t, 'file');
  const hub = s.running.hub;
  let floodFrom = 0;
  const n = await startTestNode(s, 'cf-1', {
    commit: (_m, node) => {
      floodFrom = hub.status().heartbeats;
      for (let i = 0; i < FLOOD; i++) node.heartbeat();
      return ack();
    },
  });
  t.teardown(() => n.stop());

  const id = await startJob(s.admin, { command: 'chef-client', nodes: ['cf-1'] });
  await n.waitFor('run', { timeoutMs: 30_000 });
  const readAtRun = hub.status().heartbeats - floodFrom;
  t.ok(readAtRun < FLOOD, `the run came with ${FLOOD - readAtRun} of ${FLOOD} heartbeats still unread`);

  await poll(
    'the whole flood to be read',
    () => (hub.status().heartbeats >= floodFrom + FLOOD ? true : undefined),
    60_000,
  );
  const job = await waitForJob(s.admin, id, 'complete');
  t.same(job.nodes, { succeeded: ['cf-1'] }, 'the job ran on the node');
  t.same(n.problems, [], 'the node met no problem');
});
