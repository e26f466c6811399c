// How long this process waits to hear a node before its silence counts, when the node could not have been heard
// here yet: after a restart or a takeover of its organization, and after its gateway left the cluster. Pure, from the
// transport's settings, so the rules are tested on their own.
import { RECONNECT_GRACE_MAX_MS, type PushSettings } from './ports.js';

/**
 * What a node's client may take beyond its silence to reach another member once its gateway is gone: two config
 * requests going unanswered (push-jobs-client gives each five seconds) before one that is.
 */
export const RECONFIGURE_ALLOWANCE_MS = 10_000;
/** After a restart, each node restored `up` adds this to the time the fleet has to be heard again, up to the most. */
const RECONNECT_MS_PER_NODE = 10;

type Settings = Pick<PushSettings, 'heartbeat_interval' | 'offline_threshold' | 'takeover_grace_ms'>;

/**
 * A node whose gateway left the cluster: its client waits out its silence (twice the offline window), the
 * partitions settle (takeover_grace_ms), and config requests to members frozen or gone go unanswered.
 */
export function gatewayGoneGrace(s: Settings): number {
  return 2 * s.heartbeat_interval * s.offline_threshold + (s.takeover_grace_ms ?? 0) + RECONFIGURE_ALLOWANCE_MS;
}

/**
 * A node restored `up` when this process starts serving its organization. After a restart, the whole fleet
 * reconnects at once, and CurveZMQ handshakes come up a few hundred a second: one offline window plus its share of
 * the reconnection. In a cluster this process took the organization over, and the member that had it may have been
 * the node's gateway too (killed, or frozen): the node then needs what a node of a gone gateway is given.
 */
export function restoredNodeGrace(s: Settings, restoredUp: number): number {
  const takeover = s.takeover_grace_ms ?? 0;
  const reconnect =
    s.heartbeat_interval * s.offline_threshold +
    takeover +
    Math.min(RECONNECT_GRACE_MAX_MS, restoredUp * RECONNECT_MS_PER_NODE);
  return takeover > 0 ? Math.max(reconnect, gatewayGoneGrace(s)) : reconnect;
}
