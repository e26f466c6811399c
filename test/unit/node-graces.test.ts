// How long a node not heard here yet is given before its silence counts: after a restart on one process, after a
// takeover in a cluster, and once its gateway left the cluster.
import t from 'tap';
import { gatewayGoneGrace, RECONFIGURE_ALLOWANCE_MS, restoredNodeGrace } from '../../actors/push/node-graces.js';
import { RECONNECT_GRACE_MAX_MS } from '../../actors/push/ports.js';

const WINDOW = 3 * 1000;
const one = { heartbeat_interval: 1000, offline_threshold: 3, takeover_grace_ms: 0 };
const cluster = { ...one, takeover_grace_ms: 10_000 };

t.test('a node of a gone gateway: its client’s silence, the takeover, two config requests unanswered', async (t) => {
  t.equal(gatewayGoneGrace(cluster), 2 * WINDOW + 10_000 + RECONFIGURE_ALLOWANCE_MS);
  t.equal(RECONFIGURE_ALLOWANCE_MS, 2 * 5000, 'push-jobs-client gives a config request five seconds');
});

t.test('after a restart on one process: one offline window and the fleet’s share of reconnecting', async (t) => {
  t.equal(restoredNodeGrace(one, 0), WINDOW);
  t.equal(restoredNodeGrace(one, 1000), WINDOW + 10_000, '10 ms a node');
  t.equal(restoredNodeGrace(one, 1e6), WINDOW + RECONNECT_GRACE_MAX_MS, 'up to the most');
});

t.test('after a takeover in a cluster, at least what a node of a gone gateway is given', async (t) => {
  // The member that had the organization was also the gateway of some of its nodes: frozen by SIGSTOP, their
  // clients' config requests to it went unanswered, and a node that reconnected 16 s after noticing the silence was
  // counted crashed, its command having succeeded (chaos seed 20261201, round 19), when the grace was 13 s.
  t.equal(restoredNodeGrace(cluster, 6), gatewayGoneGrace(cluster));
  t.ok(restoredNodeGrace(cluster, 6) > 2 * WINDOW + 16_000, 'room for the node that took 16 s');
  t.equal(restoredNodeGrace(cluster, 1e6), WINDOW + 10_000 + RECONNECT_GRACE_MAX_MS, 'a large fleet: its share');
});
