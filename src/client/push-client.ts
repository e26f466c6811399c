// The running node client: registration, config, the two channels, heartbeats both ways, reconfiguring
// (server silent, new server incarnation, session lifetime) and the job runner, wired together (spec 3.3).
import { randomUUID, type KeyObject } from 'node:crypto';
import { curveKeyPair } from 'zeromq';
import { readPrivateKey } from '../auth/rsa-keys.js';
import type { ServerMessage } from '../protocol/messages.js';
import { unresolvedEndpoints } from '../protocol/endpoint-host.js';
import { DropCounter } from '../protocol/receive.js';
import { GatewayReplayGuard } from '../protocol/replay.js';
import { Connection, measureAnswer, type Channel, type Sender } from './connection.js';
import { newLiveness, stepLiveness, type Liveness, type LivenessEffect } from './heartbeat.js';
import { JobRunner, type JobAnswer } from './job-runner.js';
import { errorMessage, type Logger } from './logger.js';
import type { ClientSettings } from './options.js';
import { ConfigFetchError, fetchPushConfig, type PushConfig } from './push-config.js';
import { ensureClientKey, ensureNode, StartupError } from './registration.js';
import { ServerApi, Servers } from './server-api.js';
import { HTTP_TIMEOUT_MS, worthAnotherServer } from './server-pool.js';
import { ResultReports } from './result-reports.js';
import { currentWhitelist } from './whitelist-lookup.js';

/** Config retries double from one interval up to this. */
const MAX_BACKOFF_MS = 60_000;
/** Before the first config the interval is unknown; retries start here. */
const FIRST_BACKOFF_MS = 1000;
/** setTimeout fires at once for longer delays. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How long answers already written may take to leave channels being replaced; a stopping process waits as long. */
const REPLACED_LINGER_MS = 1000;
/** A client refused because another process holds its node says so at most this often. */
const IN_USE_LOG_EVERY_MS = 60_000;

export class PushClient {
  private readonly sender: Sender;
  private readonly curve = curveKeyPair();
  /** The node hears several members of a cluster in turn (its gateways), each in a sequence of its own. */
  private readonly replay: Record<Channel, GatewayReplayGuard> = {
    heartbeat: new GatewayReplayGuard(),
    command: new GatewayReplayGuard(),
  };
  private inUseLoggedAt = -Infinity;
  private readonly drops: DropCounter;
  private readonly runner: JobRunner;
  private readonly wakers = new Set<() => void>();
  private sequence = 0;
  /** Results reported and not yet acknowledged (ack_result): sent again until they are. */
  private readonly reports: ResultReports;
  /** client.rb's servers and the members config answers list: one pool for every request of this process. */
  private readonly servers: Servers;
  private api: ServerApi | undefined;
  private privateKey: KeyObject | undefined;
  private config: PushConfig | undefined;
  private connection: Connection | undefined;
  private liveness: Liveness | undefined;
  private beat: NodeJS.Timeout | undefined;
  private renew: NodeJS.Timeout | undefined;
  private splay: NodeJS.Timeout | undefined;
  private reconfiguring = false;
  /** Reconfigures in a row that brought no server heartbeat; spaces out the next one. */
  private silentReconfigures = 0;
  private stopped = false;

  constructor(
    private readonly settings: ClientSettings,
    private readonly log: Logger,
    private readonly random: () => number = Math.random,
  ) {
    this.sender = {
      org: settings.org,
      node: settings.nodeName,
      incarnationId: randomUUID(),
      nextSequence: () => ++this.sequence,
      now: Date.now,
    };
    this.drops = new DropCounter({ log: (line) => log.warn(line) });
    this.servers = new Servers(settings.servers, log, random);
    this.reports = new ResultReports(log);
    this.runner = new JobRunner({
      nodeName: settings.nodeName,
      fileDir: settings.fileDir,
      log,
      send: (answer) => this.sendAnswer(answer),
      // Read at a commit, which will not wait for a back-off: each server is asked once, in turn.
      whitelist: () =>
        currentWhitelist(
          this.requireApi().trying(Infinity),
          `/nodes/${encodeURIComponent(settings.nodeName)}`,
          settings.whitelist,
          log,
        ),
      serverOnline: () => this.liveness?.online === true,
      measure: (answer) => measureAnswer(this.sender, answer),
      maxBodySize: () => this.config?.maxBodySize ?? 0,
    });
  }

  /** Registers if needed, fetches the config and connects, retrying while the server cannot be reached. */
  async start(): Promise<void> {
    const s = this.settings;
    await this.runner.stopLeftovers();
    const pem = await this.retrying('cannot register', () => ensureClientKey(s, this.servers, this.log));
    if (pem === undefined) return;
    this.privateKey = readPrivateKey(pem);
    this.api = new ServerApi(this.servers, s.org, { userId: s.nodeName, key: this.privateKey }, HTTP_TIMEOUT_MS);
    const api = this.api;
    await this.retrying('no node object yet', () => ensureNode(api.trying(Infinity), s, this.log));
    if (this.stopped) return;
    const config = await this.retrying('cannot get the push-jobs config', () => this.fetchConfig());
    if (config !== undefined) this.connect(config);
  }

  /** Runs `task` until it succeeds or fails for good (rethrown); undefined when the client stopped meanwhile. */
  private async retrying<T>(what: string, task: () => Promise<T>): Promise<T | undefined> {
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        return await task();
      } catch (e) {
        if (e instanceof StartupError || (e instanceof ConfigFetchError && e.permanent)) throw e;
        const wait = this.retryWait(e, FIRST_BACKOFF_MS, attempt);
        this.log.warn(`${what} (${errorMessage(e)}); trying again in ${Math.round(wait)} ms`);
        await this.pause(wait);
      }
    }
    return undefined;
  }

  /** Stops the held job's process group, tells the server, closes the channels. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const timer of [this.beat, this.renew, this.splay]) clearTimeout(timer);
    for (const wake of this.wakers) wake();
    const jobId = await this.runner.shutdown();
    const connection = this.connection;
    if (connection !== undefined) {
      if (jobId !== null) connection.sendCommand({ type: 'aborted', job_id: jobId });
      await connection.flush(1000);
      connection.close(500);
    }
    this.log.info('stopped');
  }

  private requireApi(): ServerApi {
    if (this.api === undefined) throw new Error('the client has not started');
    return this.api;
  }

  /**
   * The config from the server in use. A failure another member may not share (no answer, 408, 429, 5xx) moves the
   * client to the next server for the next try; a config fetched names the members to try from then on.
   */
  private async fetchConfig(): Promise<PushConfig> {
    if (this.privateKey === undefined) throw new Error('the client has not started');
    const { server, api, orgPath } = this.requireApi().at();
    let config: PushConfig;
    try {
      config = await fetchPushConfig(api, orgPath, this.settings.nodeName, this.privateKey, this.curve.publicKey);
    } catch (e) {
      if (e instanceof ConfigFetchError && !e.permanent && worthAnotherServer(e.status))
        this.servers.failed(server, errorMessage(e));
      throw e;
    }
    this.servers.learn(config.servers);
    if (config.curveServerKey === null && !this.settings.allowUnencrypted) {
      throw new ConfigFetchError(
        'the server offers no CurveZMQ key; set allow_unencrypted true in client.rb to connect without encryption',
        true,
      );
    }
    return config;
  }

  /**
   * Replaces the channels; job answers not yet written move to the new ones, signed with the new key. Those
   * written already get a moment to leave the old ones: closed at once, an ack on its way would be lost.
   */
  private connect(config: PushConfig): void {
    if (this.stopped) return;
    const carried = this.connection?.close(REPLACED_LINGER_MS) ?? [];
    this.config = config;
    this.connection = new Connection(
      config,
      this.sender,
      this.curve,
      this.replay,
      {
        message: (channel, m) => this.received(channel, m),
        drop: (reason, detail) => this.drops.record(reason, detail),
        error: (detail) => this.log.warn(detail),
      },
      carried,
    );
    this.liveness = newLiveness(
      {
        intervalMs: config.intervalMs,
        offlineThreshold: config.offlineThreshold,
        graceIntervals: config.offlineThreshold,
      },
      config.incarnationId,
      Date.now(),
    );
    clearInterval(this.beat);
    this.beat = setInterval(() => this.tick(), config.intervalMs);
    clearTimeout(this.renew);
    // Renew well before the session key expires on the server (reference 7.6: lifetime minus a splay).
    const renewIn = Math.min(MAX_TIMER_MS, config.lifetimeMs * (0.8 + 0.1 * this.random()));
    this.renew = setTimeout(() => void this.reconfigure('the session lifetime is running out'), renewIn);
    const how = config.curveServerKey === null ? 'unencrypted' : 'CurveZMQ';
    this.log.info(
      `connected to ${config.heartbeatAddr} and ${config.commandAddr} (${how}), server incarnation ${config.incarnationId}, heartbeat every ${config.intervalMs} ms`,
    );
    this.resendResults(true);
    // ZeroMQ keeps trying a host it cannot resolve, without a word: say so at each connection (the original client
    // checked the heartbeat host the same way, and only logged).
    void unresolvedEndpoints([config.heartbeatAddr, config.commandAddr]).then((unresolved) => {
      if (this.stopped) return;
      for (const endpoint of unresolved)
        this.log.warn(
          `cannot resolve the host of ${endpoint} (the server's server_name): the server will not hear this node until it resolves`,
        );
    });
    this.tick();
  }

  /** Every interval: our heartbeat, the server-silence check, and results unacknowledged for a while again. */
  private tick(): void {
    this.connection?.sendHeartbeat({ type: 'heartbeat', ...this.runner.jobState() });
    this.step({ type: 'tick', at: Date.now() });
    this.resendResults(false);
  }

  /** A job answer for the command channel; a result is also kept until the server acknowledges it. */
  private sendAnswer(answer: JobAnswer): void {
    this.reports.sent(answer, Date.now());
    this.connection?.sendCommand(answer);
  }

  /** Results the server has not acknowledged, again: all on new channels, else once an offline window passed. */
  private resendResults(connected: boolean): void {
    const { connection, config } = this;
    if (connection === undefined || config === undefined) return;
    this.reports.resend(connection, Date.now(), config.intervalMs * config.offlineThreshold, connected);
  }

  private step(event: Parameters<typeof stepLiveness>[1]): void {
    if (this.liveness === undefined) return;
    const { state, effects } = stepLiveness(this.liveness, event);
    this.liveness = state;
    for (const effect of effects) this.apply(effect);
  }

  private apply(effect: LivenessEffect): void {
    const interval = this.config?.intervalMs ?? FIRST_BACKOFF_MS;
    switch (effect.type) {
      case 'went_offline':
        this.log.warn(
          `no heartbeat from the server for ${effect.silentMs} ms: finishing the current job, refusing new ones`,
        );
        break;
      case 'back_online':
        this.log.info('the server heartbeat is back: accepting jobs again');
        break;
      case 'reconfigure':
        if (effect.reason === 'server_silent') {
          void this.reconfigure(
            'the server stayed silent',
            this.backoff(interval, this.silentReconfigures++ - 1),
            true,
          );
        } else {
          // Reference 2.8: a random splay below one interval, so a restarted server is not hit by every node at once.
          const wait = this.random() * interval;
          this.log.info(`the server restarted (new incarnation): reconfiguring in ${Math.round(wait)} ms`);
          clearTimeout(this.splay);
          this.splay = setTimeout(() => void this.reconfigure('the server incarnation changed'), wait);
        }
        break;
    }
  }

  private received(channel: Channel, m: ServerMessage): void {
    this.log.debug(`received ${m.type} on the ${channel} channel (sequence ${m.sequence})`);
    switch (m.type) {
      case 'heartbeat':
        this.silentReconfigures = 0;
        // The server is back while a reconfigure waits out its backoff: try now.
        if (this.reconfiguring) for (const wake of this.wakers) wake();
        this.step({ type: 'server_heartbeat', at: Date.now(), incarnation: m.incarnation_id });
        break;
      case 'commit':
        // A signed commit is the server speaking: after an outage it counts as the first heartbeat back.
        this.step({ type: 'server_heartbeat', at: Date.now(), incarnation: m.incarnation_id });
        void this.runner
          .commit(m)
          .catch((e: unknown) => this.log.error(`job ${m.job_id}: commit failed: ${errorMessage(e)}`));
        break;
      case 'run':
        this.runner.run(m);
        break;
      case 'abort':
        void this.runner.abort(m).catch((e: unknown) => this.log.error(`abort failed: ${errorMessage(e)}`));
        break;
      case 'ack_result':
        this.reports.acknowledged(m.job_id);
        break;
      case 'node_in_use': {
        // The server answers, so it is up; it only refuses this process while another one holds the node.
        this.step({ type: 'server_heartbeat', at: Date.now(), incarnation: m.incarnation_id });
        const now = Date.now();
        if (now - this.inUseLoggedAt >= IN_USE_LOG_EVERY_MS) {
          this.inUseLoggedAt = now;
          this.log.warn(
            `another push-jobs-client process holds node ${m.node}: this one is refused until that one stops (retry in about ${m.retry_after_ms} ms)`,
          );
        }
        break;
      }
    }
  }

  /**
   * Fetches a new config and reconnects, retrying with backoff until it works or the client stops. `silent`: the
   * server has not been heard for the offline window and more. When the member this client asks is the one that
   * went silent, its gateway (a member frozen or cut off takes connections and never answers them), a silence still
   * there once the wait is over moves the client to the next member first; a balancer, or another member, is asked
   * as before, and moved off only if it fails too.
   */
  private async reconfigure(why: string, firstWait = 0, silent = false): Promise<void> {
    if (this.reconfiguring || this.stopped) return;
    this.reconfiguring = true;
    try {
      if (firstWait > 0) await this.pause(firstWait);
      if (silent && this.liveness?.online !== true && this.servers.asks(this.config?.gatewayServer))
        this.servers.failed(this.servers.current, 'the server stayed silent');
      for (let attempt = 0; !this.stopped; attempt++) {
        this.log.info(`reconfiguring: ${why}`);
        try {
          this.connect(await this.fetchConfig());
          return;
        } catch (e) {
          const wait = this.retryWait(e, this.config?.intervalMs ?? FIRST_BACKOFF_MS, attempt);
          this.log.warn(`reconfigure failed (${errorMessage(e)}); trying again in ${Math.round(wait)} ms`);
          await this.pause(wait);
        }
      }
    } finally {
      this.reconfiguring = false;
    }
  }

  /** What the server asked for (Retry-After, with up to half again of jitter), else the back-off. */
  private retryWait(e: unknown, baseMs: number, attempt: number): number {
    if (e instanceof ConfigFetchError && e.retryAfterMs !== undefined)
      return Math.min(MAX_BACKOFF_MS, e.retryAfterMs * (1 + 0.5 * this.random()));
    return this.backoff(baseMs, attempt);
  }

  /** base × 2^attempt, capped, with jitter so nodes that lost the server together do not return together. */
  private backoff(baseMs: number, attempt: number): number {
    if (attempt < 0) return 0;
    return Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.min(attempt, 20)) * (0.5 + 0.5 * this.random());
  }

  /** A wait that stop() cuts short. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }
}
