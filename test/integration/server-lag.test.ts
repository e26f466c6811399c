// A server whose event loop is held up past the offline window marks no node down that kept heartbeating: the
// heartbeats waited unread, so the window grows by the lag, and GET /_status shows the lag and the downs deferred.
import t from 'tap';
import { once } from 'node:events';
import { fork } from 'node:child_process';
import { nodeStateListSchema } from '../../src/api/push-jobs.js';
import type { PushLag } from '../../src/api/status-schema.js';
import type { HeartbeatProcessData } from '../support/heartbeat-process.js';
import { pushStatus } from '../support/push-api.js';
import { killAll } from '../support/redis-probe.js';
import { startTestServer } from '../support/server.js';
import { poll, startTestNode, type TestNode } from '../support/test-node.js';

const INTERVAL = 200;
const THRESHOLD = 3;
const WINDOW = INTERVAL * THRESHOLD;
const NAMES = ['lag-1', 'lag-2', 'lag-3'];

t.test('nodes beating through a server blocked past the offline window stay up, and the lag is shown', async (t) => {
  const s = await startTestServer(t, 'file', {
    heartbeat_interval: INTERVAL,
    offline_threshold: THRESHOLD,
    online_threshold: 1,
  });
  const nodes: TestNode[] = [];
  for (const name of NAMES) nodes.push(await startTestNode(s, name));
  t.teardown(() => nodes.forEach((n) => n.stop()));
  const hub = s.running.hub;
  // Every down the server marks goes through the transport, which lets go of what waits for the node.
  const downs: string[] = [];
  const nodeDown = hub.nodeDown.bind(hub);
  hub.nodeDown = (org, node) => {
    downs.push(node);
    nodeDown(org, node);
  };

  // The nodes go on beating from a process of their own, which the server's blocked loop does not hold up; their
  // own heartbeats stop once the beater's go.
  const d = hub.describe();
  const data: HeartbeatProcessData = {
    heartbeatAddr: d.heartbeat_addr,
    curveServerKey: d.curve_public_key,
    intervalMs: INTERVAL,
    nodes: nodes.map((n) => ({
      org: n.org,
      name: n.name,
      key: n.key.toString('hex'),
      incarnation: n.incarnation,
      firstSequence: n.sent.length + 1000,
      curve: n.curvePair,
    })),
  };
  const beater = fork(new URL('../support/heartbeat-process.js', import.meta.url), [], {
    stdio: 'inherit',
    execArgv: [],
  });
  t.teardown(() => killAll([beater]));
  const beating = once(beater, 'message');
  beater.send(data);
  await beating;
  for (const n of nodes) n.pauseHeartbeats();
  const heard = hub.status().heartbeats;
  await poll("the beater's heartbeats to be heard", () =>
    hub.status().heartbeats >= heard + 2 * NAMES.length ? true : undefined,
  );

  // Ended in an immediate, the block is followed by the timers (the sweep among them) before the heartbeats queued
  // meanwhile are read: the moment a server that ignored its own lag marked every node down.
  const blockMs = WINDOW + 1000;
  await new Promise<void>((resolve) =>
    setImmediate(() => {
      const end = Date.now() + blockMs;
      while (Date.now() < end);
      resolve();
    }),
  );

  const lagOf = async (): Promise<PushLag | undefined> => (await pushStatus(s)).lag;
  const seen = await poll('a deferred down in GET /_status', async () => {
    const lag = await lagOf();
    return lag !== undefined && lag.downs_deferred > 0 ? lag : undefined;
  });
  t.ok(seen.max_ms > WINDOW, `the lag seen (${seen.max_ms} ms) is longer than the offline window`);
  t.ok(seen.downs_deferred <= NAMES.length, `${seen.downs_deferred} downs deferred, one per node at most`);
  // Once the block's lag no longer counts, the nodes' own heartbeats have kept them up. What may still count is a
  // timer's lateness on a machine busy with other test files: milliseconds, far less than an interval.
  await poll('the lag of the block to stop counting', async () =>
    ((await lagOf())?.current_ms ?? Infinity) < INTERVAL ? true : undefined,
  );
  t.same(downs, [], 'no node was marked down');
  t.equal((await lagOf())?.downs, 0, 'GET /_status counts none marked down');
  const states = nodeStateListSchema.parse(
    (await s.admin.request('GET', '/organizations/default/pushy/node_states')).body,
  );
  t.same(
    states
      .filter((n) => NAMES.includes(n.node_name))
      .map((n) => [n.node_name, n.status, n.availability])
      .sort(),
    NAMES.map((name) => [name, 'up', 'available']),
    'every node up and available',
  );
});
