// The node's view of the server's heartbeat (spec 3.3, reference 4.3, 2.8) as a pure machine: when commits are
// refused, when the client must reconfigure. Time arrives inside events; the shell owns timers and sockets.

export interface LivenessConfig {
  intervalMs: number;
  /** Intervals of silence before the server counts as gone and commits are refused. */
  offlineThreshold: number;
  /** Further intervals of silence, once offline, before the client fetches a new config and reconnects. */
  graceIntervals: number;
}

export interface Liveness {
  readonly config: LivenessConfig;
  /** The server incarnation the current config came from. */
  readonly incarnation: string;
  /** Commits are accepted only while online. A fresh connection starts online, as the original did. */
  readonly online: boolean;
  readonly lastBeatAt: number;
  /** A reconfigure was asked for; none is asked again from this state's connection. */
  readonly reconfiguring: boolean;
}

export type LivenessEvent =
  { type: 'server_heartbeat'; at: number; incarnation: string } | { type: 'tick'; at: number };

export type ReconfigureReason = 'incarnation_changed' | 'server_silent';

export type LivenessEffect =
  | { type: 'went_offline'; silentMs: number }
  | { type: 'back_online' }
  | { type: 'reconfigure'; reason: ReconfigureReason };

export interface LivenessStep {
  state: Liveness;
  effects: LivenessEffect[];
}

export function newLiveness(config: LivenessConfig, incarnation: string, at: number): Liveness {
  return { config, incarnation, online: true, lastBeatAt: at, reconfiguring: false };
}

export function stepLiveness(s: Liveness, e: LivenessEvent): LivenessStep {
  const { intervalMs, offlineThreshold, graceIntervals } = s.config;
  const effects: LivenessEffect[] = [];
  if (e.type === 'tick') {
    const silent = e.at - s.lastBeatAt;
    if (s.online && silent > offlineThreshold * intervalMs) {
      return { state: { ...s, online: false }, effects: [{ type: 'went_offline', silentMs: Math.round(silent) }] };
    }
    if (!s.online && !s.reconfiguring && silent > (offlineThreshold + graceIntervals) * intervalMs) {
      return { state: { ...s, reconfiguring: true }, effects: [{ type: 'reconfigure', reason: 'server_silent' }] };
    }
    return { state: s, effects };
  }
  let next: Liveness = s;
  // Reference 2.8: a new incarnation means the server restarted and holds none of this connection's state.
  if (e.incarnation !== s.incarnation && !s.reconfiguring) {
    next = { ...next, reconfiguring: true };
    effects.push({ type: 'reconfigure', reason: 'incarnation_changed' });
  }
  if (next.online) return { state: { ...next, lastBeatAt: e.at }, effects };
  // The first heartbeat after a silence brings the server back: a job it sends right after a restart must not be
  // refused by idle nodes the server already counts as up.
  effects.push({ type: 'back_online' });
  return { state: { ...next, online: true, lastBeatAt: e.at }, effects };
}
