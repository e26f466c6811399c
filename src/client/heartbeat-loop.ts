// What the node's client does every heartbeat interval of its connection (spec 3.3): its own heartbeat, the count
// of the server's missed ones (heartbeat.ts decides when the server is offline and when to reconfigure), and the
// results still unacknowledged sent again (result-reports.ts decides which). On the clock it is given, so that a
// unit test runs the intervals without waiting.
import { realTimers, type Timers } from '../lib/timers.js';
import { newLiveness, stepLiveness, type Liveness, type LivenessEffect, type LivenessEvent } from './heartbeat.js';
import type { PushConfig } from './push-config.js';
import type { ResendChannel, ResultReports } from './result-reports.js';

export interface HeartbeatPorts {
  /** Sends this node's heartbeat. */
  beat(): void;
  /** What the server's heartbeats, or their absence, ask of the client. */
  effect(effect: LivenessEffect): void;
}

/** The parts of a config the intervals follow. */
export type HeartbeatTiming = Pick<PushConfig, 'intervalMs' | 'offlineThreshold' | 'incarnationId'>;

export class HeartbeatLoop {
  private liveness: Liveness | undefined;
  private link: { timing: HeartbeatTiming; channel: ResendChannel } | undefined;
  private stopBeats = () => {};

  constructor(
    private readonly reports: ResultReports,
    private readonly ports: HeartbeatPorts,
    private readonly timers: Timers = realTimers,
  ) {}

  /** Whether the server's heartbeat is heard: commits are refused while it is not. */
  get online(): boolean {
    return this.liveness?.online === true;
  }

  /** New channels: the server counts as heard now, and the intervals start over on `timing`'s. */
  connected(timing: HeartbeatTiming, channel: ResendChannel): void {
    this.link = { timing, channel };
    const { intervalMs, offlineThreshold, incarnationId } = timing;
    this.liveness = newLiveness(
      { intervalMs, offlineThreshold, graceIntervals: offlineThreshold },
      incarnationId,
      this.timers.now(),
    );
    this.stopBeats();
    this.stopBeats = this.timers.every(intervalMs, () => this.tick());
  }

  /** Every interval: our heartbeat, the server-silence check, and results unacknowledged for a while again. */
  tick(): void {
    this.ports.beat();
    this.step({ type: 'tick', at: this.timers.now() });
    this.resend(false);
  }

  /** A message signed by the server: it is up. `incarnation`: the server process it came from. */
  heard(incarnation: string): void {
    this.step({ type: 'server_heartbeat', at: this.timers.now(), incarnation });
  }

  /** Results the server has not acknowledged, again: all on new channels, else once an offline window passed. */
  resend(connected: boolean): void {
    if (this.link === undefined) return;
    const { timing, channel } = this.link;
    this.reports.resend(channel, this.timers.now(), timing.intervalMs * timing.offlineThreshold, connected);
  }

  stop(): void {
    this.stopBeats();
  }

  private step(event: LivenessEvent): void {
    if (this.liveness === undefined) return;
    const { state, effects } = stepLiveness(this.liveness, event);
    this.liveness = state;
    for (const effect of effects) this.ports.effect(effect);
  }
}
