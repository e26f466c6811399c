// A scripted push-jobs node for integration tests: it registers like a real client (client, node, config),
// heartbeats over real ZeroMQ sockets, and answers each server message as its script says, including the
// ways a broken or hostile node misbehaves (late, replayed, forged, unsigned, oversize or malformed answers).
import { until } from './deadline.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { curveKeyPair, Dealer } from 'zeromq';
import { pushConfigSchema, type PushConfigBody } from '../../src/api/push-jobs.js';
import type { ApiClient } from '../../src/auth/api-client.js';
import { encodeMessage } from '../../src/protocol/frames.js';
import { envelopeFor, type NackCommitReason, type ServerMessage } from '../../src/protocol/messages.js';
import { decodeFrames } from '../../src/protocol/receive.js';
import { GatewayReplayGuard } from '../../src/protocol/replay.js';
import { decryptSessionKey } from '../../src/protocol/signing.js';
import { connectSocket } from '../../src/protocol/socket-connect.js';
import { SilenceWatch } from '../../src/loadtest/follow.js';
import { keyPair } from './api-fixtures.js';
import {
  answerMessages,
  completion,
  IDLE,
  tamperedFrames,
  type Answer,
  type HeldJob,
  type JobMessage,
  type SentMessage,
  type Tamper,
} from './node-wire.js';
import type { TestServer } from './server.js';

export const ack = (): Answer => ({ kind: 'ack' });
export const nack = (reason: NackCommitReason = 'busy'): Answer => ({ kind: 'nack', reason });
export const ignore = (): Answer => ({ kind: 'ignore' });
export const crash = (): Answer => ({ kind: 'crash' });
export const succeed = (output: { stdout?: string; stderr?: string } = {}): Answer => ({ kind: 'succeed', ...output });
export const fail = (exit_status: number, output: { stdout?: string; stderr?: string } = {}): Answer => ({
  kind: 'fail',
  exit_status,
  ...output,
});
export const late = (ms: number, answer: Answer): Answer => ({ kind: 'late', ms, answer });
export const replay = (): Answer => ({ kind: 'replay' });
export const tamper = (how: Tamper, answer: Answer): Answer => ({ kind: 'tamper', how, answer });

type Rule<M> = Answer | ((m: M, node: TestNode) => Answer);

/** One rule per job message type; a missing rule keeps the default behaviour of a healthy client. */
export interface Script {
  commit?: Rule<Extract<ServerMessage, { type: 'commit' }>>;
  run?: Rule<Extract<ServerMessage, { type: 'run' }>>;
  abort?: Rule<Extract<ServerMessage, { type: 'abort' }>>;
}

/** A healthy client: refuses a commit while it holds another job (reference 7.4), runs successfully, obeys aborts. */
const DEFAULTS: Required<Script> = {
  commit: (m, node) => (node.job.id !== null && node.job.id !== m.job_id ? nack('busy') : ack()),
  run: () => succeed(),
  abort: () => ack(),
};

export interface TestNodeOptions {
  org?: string;
  /** The client that creates the node's client and node objects (default: the server's admin). */
  by?: ApiClient;
  /** false: no client, node or config; the node signs with a key the server never issued (reference 2.5). */
  register?: boolean;
  /** The client and node objects exist already: only fetch a config, as a restarted client process does. */
  existing?: boolean;
  /** Answer the rehab abort and wait until the server lists the node available (default true). */
  waitReady?: boolean;
  /**
   * As the client: once the server has been silent for the offline window plus as many intervals again while this
   * node heartbeats, fetch the config again and reconnect to the channels it names (default true).
   */
  follow?: boolean;
}

export type Channel = 'heartbeat' | 'command';
/** `at`: epoch ms when the message was handed to its socket. */
export interface SentRecord {
  channel: Channel;
  frames: Buffer[];
  body: SentMessage;
  tampered: boolean;
  at: number;
}

const DEFAULT_WAIT_MS = 5000;
const POLL_MS = 20;

/** Polls `probe` until it returns a value other than undefined, or fails after `timeoutMs` naming `what`. */
export function poll<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = DEFAULT_WAIT_MS,
): Promise<T> {
  return until(what, probe, timeoutMs, POLL_MS);
}

export class TestNode {
  readonly incarnation = randomUUID();
  /** Every verified server message, in arrival order (server heartbeats included). */
  readonly received: ServerMessage[] = [];
  /** When each of `received` arrived (epoch ms), index for index. */
  readonly receivedAt: number[] = [];
  /** Server messages this node could not verify or decode, and socket failures: a healthy server causes none. */
  readonly problems: string[] = [];
  /** Every message this node wrote, tampered ones included. */
  readonly sent: SentRecord[] = [];
  /** The job this node holds, as its heartbeats report it. */
  job: HeldJob = IDLE;
  script: Script;
  private readonly events = new EventEmitter();
  private dealers: Record<Channel, Dealer>;
  /** The Curve options of both Dealers (empty without CurveZMQ), kept for reconnect(). */
  private curve: Partial<Record<'curveServerKey' | 'curvePublicKey' | 'curveSecretKey', string>>;
  private readonly queues: Record<Channel, Promise<void>> = {
    heartbeat: Promise.resolve(),
    command: Promise.resolve(),
  };
  private readonly timers = new Set<NodeJS.Timeout>();
  private beating: NodeJS.Timeout | undefined;
  private sequence = 0;
  private closed = false;
  /** The server's silence, checked at each of this node's heartbeats while `follow` is on (see startTestNode). */
  private readonly watch: SilenceWatch;
  /** Configs fetched again after silence, and how many of them sent the node to other channels. */
  readonly refetches = { fetched: 0, moved: 0, failed: 0 };

  constructor(
    /** The server the node talks to (moveTo changes it). */
    public server: TestServer,
    readonly name: string,
    readonly org: string,
    /** The session key; a config fetched again may bring a new one. */
    public key: Buffer,
    public config: PushConfigBody,
    script: Script,
    /** The node's client key, for fetching its config again; null: it never does (an unregistered node). */
    private readonly clientKeyPem: string | null = null,
    /** Fetch the config again after the client's silence (TestNodeOptions.follow). */
    public follow = false,
    /**
     * The Curve key pair of this node's connections, kept for its whole life as a client process keeps one: the
     * server admits it because the node named it (`ccpk`) in its config requests.
     */
    readonly curvePair: { publicKey: string; secretKey: string } = curveKeyPair(),
  ) {
    this.script = script;
    this.curve = this.curveOptions(config.curve_public_key);
    this.events.setMaxListeners(0);
    this.watch = new SilenceWatch(
      {
        intervalMs: config.push_jobs.heartbeat.interval * 1000,
        offlineThreshold: config.push_jobs.heartbeat.offline_threshold,
      },
      Date.now(),
    );
    this.dealers = this.open(0);
  }

  private curveOptions(serverKey: string | null): TestNode['curve'] {
    if (serverKey === null) return {};
    const pair = this.curvePair;
    return { curveServerKey: serverKey, curvePublicKey: pair.publicKey, curveSecretKey: pair.secretKey };
  }

  /**
   * Both channels again under a new routing id, as a client process reconnecting does, the command channel
   * `commandAfterMs` later (a client's sockets come up one by one). The same incarnation: no rehab.
   */
  reconnect(commandAfterMs: number): void {
    this.dealers.heartbeat.close();
    this.dealers.command.close();
    this.dealers = this.open(commandAfterMs);
  }

  /**
   * Both channels to another server's addresses, as a client sent to another process of a cluster: the same
   * session key and incarnation, so that server must know the key from the store, and takes the node without rehab.
   */
  moveTo(server: TestServer): void {
    const { heartbeat_addr, command_addr } = server.running.hub.describe();
    const heartbeat = { ...this.config.push_jobs.heartbeat, heartbeat_addr, command_addr };
    this.config = { ...this.config, push_jobs: { ...this.config.push_jobs, heartbeat } };
    this.server = server;
    this.reconnect(0);
  }

  /**
   * Fetches the config again from `server`, as the client does after the server's silence: a new session key is
   * taken; other channels or another server key make the node reconnect there (same incarnation, so no rehab).
   * Returns whether it moved. A server restarted on the same channels keeps the node on them, as tests expect.
   */
  async refetchConfig(): Promise<boolean> {
    if (this.clientKeyPem === null) throw new Error(`${this.name} has no client key to fetch its config with`);
    const res = await this.server
      .as(this.name, this.clientKeyPem)
      .request('GET', configPath(this.org, this.name, this.curvePair.publicKey));
    if (res.status !== 200) throw new Error(`config of ${this.name}: ${res.status} ${JSON.stringify(res.body)}`);
    const next = pushConfigSchema.parse(res.body);
    if (this.closed) return false;
    this.refetches.fetched += 1;
    this.key = decryptSessionKey(next.encoded_session_key.key, this.clientKeyPem);
    const was = this.config;
    this.config = next;
    const { heartbeat_addr, command_addr } = next.push_jobs.heartbeat;
    const moved =
      heartbeat_addr !== was.push_jobs.heartbeat.heartbeat_addr ||
      command_addr !== was.push_jobs.heartbeat.command_addr ||
      next.curve_public_key !== was.curve_public_key;
    if (!moved) return false;
    this.refetches.moved += 1;
    if (next.curve_public_key !== was.curve_public_key) this.curve = this.curveOptions(next.curve_public_key);
    this.reconnect(0);
    return true;
  }

  /** At each heartbeat while following: past the client's silence, the config is fetched again (backing off). */
  private checkSilence(): void {
    if (!this.follow || this.clientKeyPem === null || !this.watch.due(Date.now())) return;
    this.refetchConfig().then(
      (moved) => this.watch.done(Date.now(), moved ? 'moved' : 'same'),
      () => {
        this.refetches.failed += 1;
        this.watch.done(Date.now(), 'failed');
      },
    );
  }

  private open(commandAfterMs: number): Record<Channel, Dealer> {
    this.watch.restart(Date.now());
    const routingId = randomBytes(8).toString('hex'); // one identity on both channels: the hub pairs them
    const dealers = {
      heartbeat: new Dealer({ routingId, linger: 0, ...this.curve }),
      command: new Dealer({ routingId, linger: 0, ...this.curve }),
    };
    const { heartbeat_addr, command_addr } = this.config.push_jobs.heartbeat;
    connectSocket(dealers.heartbeat, heartbeat_addr);
    if (commandAfterMs === 0) connectSocket(dealers.command, command_addr);
    else {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!dealers.command.closed) connectSocket(dealers.command, command_addr);
      }, commandAfterMs);
      this.timers.add(timer);
    }
    void this.receive(dealers.heartbeat, 'heartbeat');
    void this.receive(dealers.command, 'command');
    return dealers;
  }

  get intervalMs(): number {
    return this.config.push_jobs.heartbeat.interval * 1000;
  }

  /** The server's heartbeat period is ours too; the first beat goes at once. */
  resumeHeartbeats(): void {
    if (this.closed || this.beating) return;
    this.heartbeat();
    this.beating = setInterval(() => {
      this.heartbeat();
      this.checkSilence();
    }, this.intervalMs);
  }

  pauseHeartbeats(): void {
    if (this.beating) clearInterval(this.beating);
    this.beating = undefined;
  }

  heartbeat(): void {
    this.send('heartbeat', { type: 'heartbeat', job_state: this.job.state, job_id: this.job.id });
  }

  /** Signs and sends one message with the envelope filled in; `tampered` damages it first. */
  send(channel: Channel, fields: SentMessage, how?: Tamper): void {
    if (this.closed) return;
    const body: SentMessage = {
      ...fields,
      ...envelopeFor(this.org, this.name, this.incarnation, ++this.sequence, Date.now()),
    };
    const frames = how === undefined ? encodeMessage(body, this.key) : tamperedFrames(body, how, this.key, this.config);
    this.write(channel, frames, body, how !== undefined);
  }

  /** Writes frames exactly as given (for frame counts and headers no client would send). */
  sendRaw(channel: Channel, frames: Buffer[]): void {
    this.write(channel, frames, { type: 'raw' }, true);
  }

  /** Resends a message this node wrote earlier, byte for byte, on the channel it first took or on `channel`. */
  replay(
    record: SentRecord | undefined = this.sent.filter((r) => r.channel === 'command' && !r.tampered).at(-1),
    channel?: Channel,
  ): void {
    if (record === undefined) throw new Error(`${this.name} has sent nothing to replay`);
    this.write(channel ?? record.channel, record.frames, record.body, true);
  }

  /** The first received message of `type` at index `after` or later that satisfies `where`. */
  waitFor<T extends ServerMessage['type']>(
    type: T,
    opts: { where?: (m: Extract<ServerMessage, { type: T }>) => boolean; after?: number; timeoutMs?: number } = {},
  ): Promise<Extract<ServerMessage, { type: T }>> {
    const match = (m: ServerMessage): m is Extract<ServerMessage, { type: T }> =>
      m.type === type && (opts.where === undefined || opts.where(m as Extract<ServerMessage, { type: T }>));
    return this.waitIn(
      'received',
      this.received,
      match,
      opts.after ?? 0,
      opts.timeoutMs,
      `${this.name} to receive ${type}`,
    );
  }

  /** The first message of `type` this node sent (tampered ones excluded) at index `after` or later. */
  waitForSent(
    type: string,
    opts: { where?: (m: SentMessage) => boolean; after?: number; timeoutMs?: number } = {},
  ): Promise<SentRecord> {
    const match = (r: SentRecord): r is SentRecord =>
      !r.tampered && r.body.type === type && (opts.where === undefined || opts.where(r.body));
    return this.waitIn('sent', this.sent, match, opts.after ?? 0, opts.timeoutMs, `${this.name} to send ${type}`);
  }

  /** Waits until the node answered the rehab abort and the server lists it `up` and available. */
  async ready(timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
    await this.waitForSent('aborted', { where: (m) => m.job_id === null, timeoutMs });
    const client = this.server.admin;
    await poll(
      `${this.name} to be available`,
      async () => {
        const res = await client.request('GET', `/organizations/${this.org}/pushy/node_states/${this.name}`);
        const body = res.body as { status?: unknown; availability?: unknown } | null;
        return body?.status === 'up' && body.availability === 'available' ? true : undefined;
      },
      timeoutMs,
    );
  }

  /** Ends the job this node runs, as its command exiting would (for jobs scripted to keep running). */
  finish(exit_status = 0, output: { stdout?: string; stderr?: string } = {}): void {
    const job_id = this.job.id;
    if (job_id === null || this.job.state !== 'running') throw new Error(`${this.name} runs no job`);
    const done = completion(job_id, exit_status, this.job.capture, output);
    this.job = IDLE;
    this.send('command', done);
  }

  /** Like a killed client: silence, then closed sockets. */
  crash(): void {
    this.stop();
  }

  stop(): void {
    if (this.closed) return;
    this.closed = true;
    this.pauseHeartbeats();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.dealers.heartbeat.close();
    this.dealers.command.close();
    this.events.emit('closed');
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private write(channel: Channel, frames: Buffer[], body: SentMessage, tampered: boolean): void {
    if (this.closed) return;
    const record: SentRecord = { channel, frames, body, tampered, at: Date.now() };
    this.sent.push(record);
    this.events.emit('sent', record);
    const dealer = this.dealers[channel];
    this.queues[channel] = this.queues[channel]
      .then(() => dealer.send(frames))
      .catch(() => {
        // A closed socket: the node is gone, as a crashed client would be.
      });
  }

  private waitIn<R, M extends R>(
    event: string,
    list: readonly R[],
    match: (r: R) => r is M,
    after: number,
    timeoutMs = DEFAULT_WAIT_MS,
    what: string,
  ): Promise<M> {
    const found = list.slice(after).find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.events.off(event, onItem);
        this.events.off('closed', onClosed);
      };
      const onItem = (r: R) => {
        if (match(r)) {
          done();
          resolve(r);
        }
      };
      const onClosed = () => {
        done();
        reject(new Error(`${this.name} stopped while waiting for ${what}`));
      };
      const timer = setTimeout(() => {
        done();
        const seen = list.map(
          (r) =>
            (r as { type?: string; body?: { type?: string } }).type ?? (r as { body?: { type?: string } }).body?.type,
        );
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}; seen: ${seen.filter((s) => s !== 'heartbeat').join(', ') || 'nothing but heartbeats'}`,
          ),
        );
      }, timeoutMs);
      this.events.on(event, onItem);
      this.events.once('closed', onClosed);
    });
  }

  private async receive(dealer: Dealer, channel: Channel): Promise<void> {
    const opts = {
      expectIdentity: false,
      maxBodySize: this.config.max_body_size,
      now: 0,
      replay: new GatewayReplayGuard(),
      schema: 'server' as const,
      keyFor: (org: string, node: string) => (org === this.org && node === this.name ? this.key : undefined),
    };
    try {
      for await (const frames of dealer) {
        opts.now = Date.now();
        const d = decodeFrames(frames, opts);
        if (!d.ok) {
          this.problems.push(`${channel} channel, ${d.reason}: ${d.detail}`);
          continue;
        }
        if ((d.message.type === 'heartbeat') !== (channel === 'heartbeat')) {
          this.problems.push(`${d.message.type} on the ${channel} channel`);
          continue;
        }
        this.received.push(d.message);
        this.receivedAt.push(Date.now());
        this.watch.heard(Date.now());
        this.events.emit('received', d.message);
        // An ack_result is the server's answer to this node's own; nothing answers it.
        const type = d.message.type;
        if (type !== 'heartbeat' && type !== 'node_in_use' && type !== 'ack_result')
          this.answer(d.message, this.ruleFor(d.message));
      }
    } catch (e) {
      // A socket closed by stop() or reconnect() ends its loop; anything else is a problem.
      if (!dealer.closed)
        this.problems.push(`${channel} channel stopped: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private ruleFor(m: JobMessage): Answer {
    // Each branch narrows the rule to its own message type.
    switch (m.type) {
      case 'commit': {
        const rule = this.script.commit ?? DEFAULTS.commit;
        return typeof rule === 'function' ? rule(m, this) : rule;
      }
      case 'run': {
        const rule = this.script.run ?? DEFAULTS.run;
        return typeof rule === 'function' ? rule(m, this) : rule;
      }
      case 'abort': {
        const rule = this.script.abort ?? DEFAULTS.abort;
        return typeof rule === 'function' ? rule(m, this) : rule;
      }
    }
  }

  private answer(m: JobMessage, a: Answer, how?: Tamper): void {
    switch (a.kind) {
      case 'ignore':
        return;
      case 'crash':
        this.crash();
        return;
      case 'replay':
        this.replay();
        return;
      case 'late': {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          this.answer(m, a.answer, how);
        }, a.ms);
        this.timers.add(timer);
        return;
      }
      case 'tamper':
        this.answer(m, a.answer, a.how);
        return;
      default: {
        const { messages, held } = answerMessages(m, a, this.job);
        if (how === undefined) this.job = held; // a damaged answer never reaches the server, so the node keeps its job
        for (const body of messages) this.send('command', body, how);
      }
    }
  }
}

/**
 * Registers node `name` like a push-jobs client (a client and a node object made by `by`, then the config
 * endpoint signed as that client), connects both channels and starts heartbeating. By default it returns
 * once the rehab abort is answered and the server lists the node available.
 */
export async function startTestNode(
  server: TestServer,
  name: string,
  script: Script = {},
  opts: TestNodeOptions = {},
): Promise<TestNode> {
  const org = opts.org ?? 'default';
  const node =
    opts.register === false
      ? unregisteredNode(server, name, org, script)
      : await registeredNode(server, name, org, script, opts.by ?? server.admin, opts.existing === true);
  node.follow = opts.register !== false && opts.follow !== false;
  node.resumeHeartbeats();
  if (opts.waitReady !== false && opts.register !== false) {
    try {
      await node.ready();
    } catch (e) {
      node.stop();
      throw e;
    }
  }
  return node;
}

async function registeredNode(
  server: TestServer,
  name: string,
  org: string,
  script: Script,
  by: ApiClient,
  existing: boolean,
): Promise<TestNode> {
  const pair = await keyPair(0);
  if (!existing) await createObjects(name, org, by, pair.publicKeyPem);
  const curve = curveKeyPair();
  const res = await server.as(name, pair.privateKeyPem).request('GET', configPath(org, name, curve.publicKey));
  if (res.status !== 200) throw new Error(`config of ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  const config = pushConfigSchema.parse(res.body);
  return new TestNode(
    server,
    name,
    org,
    decryptSessionKey(config.encoded_session_key.key, pair.privateKeyPem),
    config,
    script,
    pair.privateKeyPem,
    false,
    curve,
  );
}

/** The config endpoint naming the node's Curve public key, as the client asks it (reference 2.2). */
export function configPath(org: string, node: string, ccpk: string): string {
  return `/organizations/${org}/pushy/config/${node}?ccpk=${encodeURIComponent(ccpk)}`;
}

async function createObjects(name: string, org: string, by: ApiClient, publicKeyPem: string): Promise<void> {
  const created = await by.request('POST', `/organizations/${org}/clients`, { name, public_key: publicKeyPem });
  if (created.status !== 201)
    throw new Error(`creating client ${name}: ${created.status} ${JSON.stringify(created.body)}`);
  const node = await by.request('POST', `/organizations/${org}/nodes`, { name });
  if (node.status !== 201) throw new Error(`creating node ${name}: ${node.status} ${JSON.stringify(node.body)}`);
}

/** A node that skipped the config endpoint: the addresses are public, the key and its lifetime are its own invention. */
function unregisteredNode(server: TestServer, name: string, org: string, script: Script): TestNode {
  const d = server.running.hub.describe();
  const settings = server.running.hub.settings;
  const config: PushConfigBody = {
    type: 'config',
    host: d.server_name,
    node: name,
    organization: org,
    push_jobs: {
      heartbeat: {
        heartbeat_addr: d.heartbeat_addr,
        command_addr: d.command_addr,
        interval: settings.heartbeat_interval / 1000,
        offline_threshold: settings.offline_threshold,
        online_threshold: settings.online_threshold,
      },
    },
    curve_public_key: d.curve_public_key,
    encoded_session_key: { method: 'hmac_sha256', key: '' },
    lifetime: 3600,
    incarnation_id: d.incarnation_id,
    max_body_size: d.max_body_size,
    max_message_skew: d.max_message_skew,
  };
  return new TestNode(server, name, org, randomBytes(32), config, script);
}
