// When the node's client fetches a new config and opens new channels (spec 3.3, reference 2.8 and 7.6): before the
// session key expires, a moment after the server restarted, and once the server stayed silent; a reconfigure that
// fails is tried again (retries.ts) until it works. On the clock it is given, so that a unit test runs it.
import type { Timers } from '../lib/timers.js';
import { errorMessage, type Logger } from './logger.js';
import type { PushConfig } from './push-config.js';
import { backoff, FIRST_BACKOFF_MS, type Retries } from './retries.js';
import type { Servers } from './server-api.js';

/** setTimeout fires at once for longer delays. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ReconfigurePorts {
  log: Logger;
  /** The pool the config is asked of. */
  servers: Servers;
  retries: Retries;
  timers: Timers;
  random: () => number;
  /** The config in use; undefined before the first. */
  config(): PushConfig | undefined;
  /** A config from the server the pool asks now (fetchFromPool). */
  fetch(): Promise<PushConfig>;
  /** New channels for `config`. */
  connect(config: PushConfig): void;
  /** Whether the server's heartbeat is heard. */
  online(): boolean;
}

export class Reconfigurer {
  private reconfiguring = false;
  /** Reconfigures in a row that brought no server heartbeat; spaces out the next one. */
  private silentReconfigures = 0;
  private cancelRenew = () => {};
  private cancelSplay = () => {};
  private stopped = false;

  constructor(private readonly p: ReconfigurePorts) {}

  /** New channels: renew well before the session key expires on the server (reference 7.6: lifetime minus a splay). */
  connected(config: PushConfig): void {
    this.cancelRenew();
    const renewIn = Math.min(MAX_TIMER_MS, config.lifetimeMs * (0.8 + 0.1 * this.p.random()));
    this.cancelRenew = this.p.timers.after(renewIn, () => void this.reconfigure('the session lifetime is running out'));
  }

  /** The server stayed silent past the offline window and its grace: at once, then later each time in a row. */
  serverSilent(): void {
    const wait = backoff(this.interval(), this.silentReconfigures++ - 1, this.p.random);
    void this.reconfigure('the server stayed silent', wait, true);
  }

  /**
   * A new server incarnation: reconfigures after a random splay below one interval (reference 2.8), so a restarted
   * server is not hit by every node at once.
   */
  serverRestarted(): void {
    const wait = this.p.random() * this.interval();
    this.p.log.info(`the server restarted (new incarnation): reconfiguring in ${Math.round(wait)} ms`);
    this.cancelSplay();
    this.cancelSplay = this.p.timers.after(wait, () => void this.reconfigure('the server incarnation changed'));
  }

  /** A server heartbeat: the silences in a row are over, and a reconfigure waiting out its back-off tries now. */
  heard(): void {
    this.silentReconfigures = 0;
    if (this.reconfiguring) this.p.retries.wake();
  }

  stop(): void {
    this.stopped = true;
    this.cancelRenew();
    this.cancelSplay();
  }

  private interval(): number {
    return this.p.config()?.intervalMs ?? FIRST_BACKOFF_MS;
  }

  /**
   * Fetches a new config and reconnects, retrying with back-off until it works or the client stops. `silent`: the
   * server has not been heard for the offline window and more. When the member this client asks is the one that
   * went silent, its gateway (a member frozen or cut off takes connections and never answers them), a silence still
   * there once the wait is over moves the client to the next member first; a balancer, or another member, is asked
   * as before, and moved off only if it fails too.
   */
  private async reconfigure(why: string, firstWait = 0, silent = false): Promise<void> {
    if (this.reconfiguring || this.stopped) return;
    this.reconfiguring = true;
    const { log, servers, retries } = this.p;
    try {
      if (firstWait > 0) await retries.pause(firstWait);
      if (silent && !this.p.online() && servers.asks(this.p.config()?.gatewayServer))
        servers.failed(servers.current, 'the server stayed silent');
      await retries.retrying(async () => this.p.connect(await this.p.fetch()), {
        baseMs: () => this.interval(),
        trying: () => log.info(`reconfiguring: ${why}`),
        failed: (e, waitMs) =>
          log.warn(`reconfigure failed (${errorMessage(e)}); trying again in ${Math.round(waitMs)} ms`),
      });
    } finally {
      this.reconfiguring = false;
    }
  }
}
