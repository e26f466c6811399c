// Silence is swept many times an interval: a node that stops heartbeating is marked down soon after its
// offline_threshold runs out, not up to a whole interval later at the next tick.
import t from 'tap';
import { startTestServer } from '../support/server.js';
import { poll, startTestNode } from '../support/test-node.js';

const INTERVAL = 1000;
const THRESHOLD = 2;

t.test('a silent node is down within half an interval of its offline threshold', async (t) => {
  const s = await startTestServer(t, 'file', {
    heartbeat_interval: INTERVAL,
    offline_threshold: THRESHOLD,
    online_threshold: 1,
  });
  const stateOf = async (): Promise<string | undefined> =>
    ((await s.admin.request('GET', '/organizations/default/pushy/node_states/sw-1')).body as { status?: string })
      .status;
  const n = await startTestNode(s, 'sw-1');
  t.teardown(() => n.stop());
  await poll('sw-1 to be up', async () => ((await stateOf()) === 'up' ? true : undefined));

  // Three rounds: with one check an interval, each would land anywhere in the interval after the threshold.
  for (let round = 0; round < 3; round++) {
    const heard = n.sent.length;
    n.resumeHeartbeats();
    await poll('a heartbeat', () => (n.sent.length > heard ? true : undefined));
    await poll('sw-1 to be up', async () => ((await stateOf()) === 'up' ? true : undefined));
    await new Promise((r) => setTimeout(r, round * 300));
    n.pauseHeartbeats();
    const lastBeat = n.sent.filter((r) => r.body.type === 'heartbeat').at(-1)?.at ?? 0;
    await poll('sw-1 to be down', async () => ((await stateOf()) === 'down' ? true : undefined), 10_000);
    const silence = Date.now() - lastBeat;
    t.ok(silence > THRESHOLD * INTERVAL, `not down before the threshold (${silence} ms)`);
    t.ok(silence < THRESHOLD * INTERVAL + INTERVAL / 2, `down ${silence} ms after the last heartbeat`);
  }
});
