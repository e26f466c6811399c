// When a simulated node fetches its config again, as the real client does after the server fell silent (its
// gateway died and another process of the cluster serves it now), and whether the config then sends it elsewhere.
// Pure: time comes in as arguments, randomness as a function, so tests drive it with a clock of their own.
import type { PushConfig } from '../client/push-config.js';

/** Config retries double from one interval up to this (the client's own cap). */
export const MAX_BACKOFF_MS = 60_000;

/**
 * The silence after which the client fetches its config again: the offline window (`offline_threshold`
 * intervals) plus a grace of as many intervals again (src/client/heartbeat.ts, `graceIntervals`).
 */
export function silenceLimitMs(c: Pick<PushConfig, 'intervalMs' | 'offlineThreshold'>): number {
  return 2 * c.offlineThreshold * c.intervalMs;
}

/** base × 2^attempt, capped, times 0.5 to 1 at random: nodes that lost a server together do not return together. */
export function backoffMs(baseMs: number, attempt: number, random: () => number): number {
  return Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.min(Math.max(attempt, 0), 20)) * (0.5 + 0.5 * random());
}

/**
 * Where a config sends a node's channels: nodes sharing a connection must agree on all of it. The incarnation is
 * part of it: a server restarted on the same ports holds none of the old connection's state, and the client
 * replaces its channels then too.
 */
export function endpointKey(c: Pick<PushConfig, 'heartbeatAddr' | 'commandAddr' | 'curveServerKey' | 'incarnationId'>) {
  return `${c.heartbeatAddr} ${c.commandAddr} ${c.curveServerKey ?? '-'} ${c.incarnationId}`;
}

export type FetchOutcome = 'moved' | 'same' | 'failed';

/**
 * One node's watch on the server's silence. While the server speaks, `heard` is two stores and `due` one
 * comparison: the default path costs nothing more. Once silent past the limit, the first fetch waits a random
 * part of an interval (splay), later ones back off; hearing the server again resets both.
 */
export class SilenceWatch {
  lastHeardAt: number;
  /** Fetches in a row without the server heard in between. */
  attempts = 0;
  /** No fetch before this (0: none scheduled yet). */
  private notBefore = 0;
  private fetching = false;
  private readonly limitMs: number;
  private readonly intervalMs: number;

  constructor(
    config: Pick<PushConfig, 'intervalMs' | 'offlineThreshold'>,
    at: number,
    private readonly random: () => number = Math.random,
  ) {
    this.limitMs = silenceLimitMs(config);
    this.intervalMs = config.intervalMs;
    this.lastHeardAt = at;
  }

  /** A signed message from the server (heartbeat, job message, node_in_use): it is there. */
  heard(at: number): void {
    this.lastHeardAt = at;
    if (this.attempts !== 0 || this.notBefore !== 0) {
      this.attempts = 0;
      this.notBefore = 0;
    }
  }

  /** New channels (a restart, a move): the silence counts from now. */
  restart(at: number): void {
    this.lastHeardAt = at;
  }

  /** Whether to fetch the config now; once true, false until `done`. */
  due(at: number): boolean {
    if (at - this.lastHeardAt < this.limitMs || this.fetching) return false;
    if (this.notBefore === 0) this.notBefore = at + this.random() * this.intervalMs;
    if (at < this.notBefore) return false;
    this.fetching = true;
    return true;
  }

  /**
   * A fetch ended: the next one, should the silence go on, backs off (a move also restarts the silence), or waits
   * what the server asked for (`retryAfterMs`, a cluster's answer while an organization changes process).
   */
  done(at: number, outcome: FetchOutcome, retryAfterMs?: number): void {
    this.fetching = false;
    this.notBefore =
      at +
      (retryAfterMs === undefined
        ? backoffMs(this.intervalMs, this.attempts, this.random)
        : retryAfterMs * (1 + 0.5 * this.random()));
    this.attempts += 1;
    if (outcome === 'moved') this.lastHeardAt = at;
  }

  get inFlight(): boolean {
    return this.fetching;
  }
}
