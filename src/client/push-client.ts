// The running node client: registration, config, the two channels, heartbeats both ways (heartbeat-loop.ts),
// reconfiguring (reconfigurer.ts: server silent, new server incarnation, session lifetime) and the job runner, wired
// together (spec 3.3). Every timer of theirs runs on the Timers it is given: Node's, unless a test's clock.
import { randomUUID, type KeyObject } from 'node:crypto';
import { curveKeyPair } from 'zeromq';
import { readPrivateKey } from '../auth/rsa-keys.js';
import type { ServerMessage } from '../protocol/messages.js';
import { unresolvedEndpoints } from '../protocol/endpoint-host.js';
import { DropCounter } from '../protocol/receive.js';
import { GatewayReplayGuard } from '../protocol/replay.js';
import { realTimers, type Timers } from '../lib/timers.js';
import { Connection, measureAnswer, type Channel, type Sender } from './connection.js';
import type { LivenessEffect } from './heartbeat.js';
import { HeartbeatLoop } from './heartbeat-loop.js';
import { JobRunner, type JobAnswer } from './job-runner.js';
import { errorMessage, type Logger } from './logger.js';
import type { ClientSettings } from './options.js';
import { fetchFromPool, fetchPushConfig, type PushConfig } from './push-config.js';
import { Reconfigurer } from './reconfigurer.js';
import { ensureClientKey, ensureNode } from './registration.js';
import { Retries, startTries } from './retries.js';
import { ServerApi, Servers } from './server-api.js';
import { HTTP_TIMEOUT_MS } from './server-pool.js';
import { ResultReports } from './result-reports.js';
import { currentWhitelist } from './whitelist-lookup.js';

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
  private sequence = 0;
  /** Results reported and not yet acknowledged (ack_result): sent again until they are. */
  private readonly reports: ResultReports;
  /** client.rb's servers and the members config answers list: one pool for every request of this process. */
  private readonly servers: Servers;
  private readonly retries: Retries;
  private readonly heartbeats: HeartbeatLoop;
  private readonly reconfigurer: Reconfigurer;
  private api: ServerApi | undefined;
  private privateKey: KeyObject | undefined;
  private config: PushConfig | undefined;
  private connection: Connection | undefined;
  private stopped = false;

  constructor(
    private readonly settings: ClientSettings,
    private readonly log: Logger,
    random: () => number = Math.random,
    private readonly timers: Timers = realTimers,
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
    this.retries = new Retries(timers, random);
    this.heartbeats = new HeartbeatLoop(
      this.reports,
      {
        beat: () => this.connection?.sendHeartbeat({ type: 'heartbeat', ...this.runner.jobState() }),
        effect: (effect) => this.apply(effect),
      },
      timers,
    );
    this.reconfigurer = new Reconfigurer({
      log,
      servers: this.servers,
      retries: this.retries,
      timers,
      random,
      config: () => this.config,
      fetch: () => this.fetchConfig(),
      connect: (config) => this.connect(config),
      online: () => this.heartbeats.online,
    });
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
      serverOnline: () => this.heartbeats.online,
      measure: (answer) => measureAnswer(this.sender, answer),
      maxBodySize: () => this.config?.maxBodySize ?? 0,
      timers,
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
  private retrying<T>(what: string, task: () => Promise<T>): Promise<T | undefined> {
    return this.retries.retrying(task, startTries(what, this.log));
  }

  /** Stops the held job's process group, tells the server, closes the channels. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.heartbeats.stop();
    this.reconfigurer.stop();
    this.retries.stop();
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

  /** The config from the server in use, or the next one after a failure another may not share (fetchFromPool). */
  private async fetchConfig(): Promise<PushConfig> {
    const key = this.privateKey;
    if (key === undefined) throw new Error('the client has not started');
    const api = this.requireApi();
    return fetchFromPool(
      this.servers,
      (server) => {
        const at = api.at(server);
        return fetchPushConfig(at.api, at.orgPath, this.settings.nodeName, key, this.curve.publicKey);
      },
      this.settings.allowUnencrypted,
    );
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
      this.timers,
    );
    this.heartbeats.connected(config, this.connection);
    this.reconfigurer.connected(config);
    const how = config.curveServerKey === null ? 'unencrypted' : 'CurveZMQ';
    this.log.info(
      `connected to ${config.heartbeatAddr} and ${config.commandAddr} (${how}), server incarnation ${config.incarnationId}, heartbeat every ${config.intervalMs} ms`,
    );
    this.heartbeats.resend(true);
    // ZeroMQ keeps trying a host it cannot resolve, without a word: say so at each connection (the original client
    // checked the heartbeat host the same way, and only logged).
    void unresolvedEndpoints([config.heartbeatAddr, config.commandAddr]).then((unresolved) => {
      if (this.stopped) return;
      for (const endpoint of unresolved)
        this.log.warn(
          `cannot resolve the host of ${endpoint} (the server's server_name): the server will not hear this node until it resolves`,
        );
    });
    this.heartbeats.tick();
  }

  /** A job answer for the command channel; a result is also kept until the server acknowledges it. */
  private sendAnswer(answer: JobAnswer): void {
    this.reports.sent(answer, this.timers.now());
    this.connection?.sendCommand(answer);
  }

  private apply(effect: LivenessEffect): void {
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
        if (effect.reason === 'server_silent') this.reconfigurer.serverSilent();
        else this.reconfigurer.serverRestarted();
        break;
    }
  }

  private received(channel: Channel, m: ServerMessage): void {
    this.log.debug(`received ${m.type} on the ${channel} channel (sequence ${m.sequence})`);
    switch (m.type) {
      case 'heartbeat':
        // The server is back while a reconfigure waits out its backoff: try now.
        this.reconfigurer.heard();
        this.heartbeats.heard(m.incarnation_id);
        break;
      case 'commit':
        // A signed commit is the server speaking: after an outage it counts as the first heartbeat back.
        this.heartbeats.heard(m.incarnation_id);
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
        this.heartbeats.heard(m.incarnation_id);
        const now = this.timers.now();
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
}
