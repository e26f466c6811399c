// A worker process of infra-loadtest: it provisions its share of the nodes, connects them, sends their
// heartbeats from one scheduler, answers jobs through them and reports to the parent in batches.
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { KeyObject } from 'node:crypto';
import { context, curveKeyPair } from 'zeromq';
import { ApiClient } from '../auth/api-client.js';
import { readPrivateKey, toSpkiPem } from '../auth/rsa-keys.js';
import { messageOf } from '../lib/thrown.js';
import { parentMessageSchema, type Batch, type JobTally, type WorkerInit, type WorkerMessage } from './ipc.js';
import { deleteNode, listKnown, pool, provisionNode, type ProvisionTarget } from './provision.js';
import { ConfigFetchError, fetchPushConfig, type PushConfig } from '../client/push-config.js';
import {
  HTTP_TIMEOUT_MS,
  learnServers,
  moveOn,
  newServerPool,
  worthAnotherServer,
  type ServerPool,
} from '../client/server-pool.js';
import { endpointKey, type FetchOutcome } from './follow.js';
import { unresolvedEndpoints } from '../protocol/endpoint-host.js';
import { receiveIntoOwnMemory } from '../protocol/zmq-context.js';
import { SharedLink } from './shared-link.js';
import { fileRecorder } from './node-record.js';
import { now, SimNode, type NodeSink } from './sim-node.js';
import { tallyOf } from './tally.js';
import { seededRandom } from './behaviour.js';

/** The scheduler's step: each node's heartbeat slot is one of interval / TICK_MS. */
const TICK_MS = 10;
const BATCH_MS = 200;
const PROGRESS_MS = 250;
/** Intervals a flapping node keeps beating between silences (plus up to as many again, at random). */
const FLAP_UP_INTERVALS = 3;
/**
 * Nodes connect in waves: the next wave once most of this one hears the server, or after a while. A whole fleet
 * connecting at once makes thousands of CurveZMQ handshakes queue on the server, and connections time out.
 */
const WAVE = 250;
const WAVE_SHARE = 0.9;
const WAVE_WAIT_MS = 5000;
/** Beyond the offline threshold, intervals a flapping or crashed node stays silent. */
const SILENCE_EXTRA_INTERVALS = 2;

function send(m: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined || !process.connected) return resolve();
    process.send(m, undefined, {}, () => resolve());
  });
}

interface Slot {
  node: SimNode;
  visits: number;
  pausedUntil: number;
  nextPauseAt: number;
  restartAt: number;
}

class Worker {
  private readonly nodes: SimNode[] = [];
  /**
   * With --nodes-per-connection above 1: the shared connections, grouped by the channels their nodes' configs
   * name (endpointKey). Grouping rather than fetching the config per link: each node's config names its own
   * gateway (the cluster spreads an organization's nodes over its members by node), so nodes placed together
   * may be sent to different processes, and a link can only carry nodes bound for the same channels.
   */
  private readonly links = new Map<string, SharedLink[]>();
  /**
   * The Curve key pair of every connection this worker opens, as one client process keeps one pair (reference 2.2):
   * each node names it in its config requests, so the server admits it for each of them.
   */
  private readonly curve = curveKeyPair();
  private clientKey: KeyObject | undefined;
  /** Configs fetched again after silence: waiting, and in flight (at most --api-concurrency / workers). */
  private readonly refetchQueue: SimNode[] = [];
  private refetching = 0;
  /**
   * Where configs are fetched again: the run's servers, then the members the config answers list, as the client
   * keeps them. A fetch that fails where another member may not, or a node whose server went silent, moves on.
   */
  private servers: ServerPool;
  private slots: Slot[] = [];
  private readonly tallies = new Map<string, JobTally>();
  private batch: Omit<Batch, 'jobs'> = Worker.emptyBatch();
  private started = false;
  private stopping = false;
  private ticker: NodeJS.Timeout | undefined;
  private flusher: NodeJS.Timeout | undefined;
  private readonly random = seededRandom(process.pid);
  /** This worker's event-loop delay once its nodes heartbeat (provisioning's key work is not the nodes' lateness). */
  private readonly lag = monitorEventLoopDelay({ resolution: 10 });

  constructor(private readonly init: WorkerInit) {
    this.servers = newServerPool(init.apiUrls.length > 0 ? init.apiUrls : [init.baseUrl]);
  }

  private static emptyBatch(): Omit<Batch, 'jobs'> {
    return {
      type: 'batch',
      heartbeatsSent: 0,
      answersSent: 0,
      serverHeartbeats: 0,
      nodesHeard: 0,
      drops: {},
      held: 0,
      heldUntil: 0,
      errors: [],
      flaps: [],
      crashes: [],
      refetches: { moved: 0, same: 0, failed: 0 },
      lagMaxMs: 0,
    };
  }

  private readonly sink: NodeSink = {
    commit: (job, at) => {
      const t = tallyOf(this.tallies, job);
      t.commits += 1;
      t.firstCommitAt = Math.min(t.firstCommitAt, at);
      t.lastCommitAt = Math.max(t.lastCommitAt, at);
    },
    voted: (job, vote, at) => {
      const t = tallyOf(this.tallies, job);
      if (vote === 'ack') {
        t.acks += 1;
        t.lastAckAt = Math.max(t.lastAckAt, at);
      } else t.nacks += 1;
    },
    run: (job, at) => {
      const t = tallyOf(this.tallies, job);
      t.runs += 1;
      t.firstRunAt = Math.min(t.firstRunAt, at);
      t.lastRunAt = Math.max(t.lastRunAt, at);
    },
    result: (job, result, at) => {
      const t = tallyOf(this.tallies, job);
      t[result] += 1;
      t.lastResultAt = Math.max(t.lastResultAt, at);
    },
    serverHeartbeat: (first) => {
      this.batch.serverHeartbeats += 1;
      if (first) this.batch.nodesHeard += 1;
    },
    answered: () => (this.batch.answersSent += 1),
    drop: (reason) => (this.batch.drops[reason] = (this.batch.drops[reason] ?? 0) + 1),
    heldElsewhere: (retryAfterMs) => {
      this.batch.held += 1;
      this.batch.heldUntil = Math.max(this.batch.heldUntil, Date.now() + retryAfterMs);
    },
    error: (detail) => {
      if (this.batch.errors.length < 20) this.batch.errors.push(detail);
    },
    crashed: (node, at) => this.batch.crashes.push({ node, kind: 'crash', at }),
  };

  async provision(): Promise<void> {
    const i = this.init;
    // Two sockets a connection, and a few spare: zeromq's default of 1023 would stop a worker at about 500 nodes.
    const connections = Math.ceil(i.nodes.length / i.nodesPerConnection);
    context.maxSockets = Math.min(context.maxSocketsLimit, Math.max(context.maxSockets, connections * 2 + 64));
    // As the server: a commit or run read from each of thousands of connections would each hold a read buffer.
    receiveIntoOwnMemory();
    const clientKey = readPrivateKey(i.clientKeyPem);
    this.clientKey = clientKey;
    const target: ProvisionTarget = {
      baseUrl: i.baseUrl,
      org: i.org,
      admin: new ApiClient({ baseUrl: i.baseUrl, userId: i.user, key: i.userKeyPem, timeoutMs: 30_000 }),
      clientKey,
      clientPublicKeyPem: i.clientPublicKeyPem,
      clientPublicKeySpki: toSpkiPem(i.clientPublicKeyPem) ?? '',
      ccpk: this.curve.publicKey,
    };
    let done = 0;
    let reused = 0;
    const endpoints = new Set<string>();
    const progress = setInterval(() => void send({ type: 'provisioned', done, reused }), PROGRESS_MS);
    try {
      const known = await listKnown(target.admin, i.org);
      await pool(i.nodes, i.apiConcurrency, async ({ name, behaviour }) => {
        const p = await provisionNode(target, name, known);
        // Checked with the first node that names them, before the rest of the fleet is provisioned for nothing.
        const named = [p.config.heartbeatAddr, p.config.commandAddr].filter((e) => !endpoints.has(e));
        for (const e of named) endpoints.add(e);
        const unresolved = await unresolvedEndpoints(named);
        if (unresolved.length > 0)
          throw new Error(
            `the server names ${unresolved.join(' and ')} for its ZeroMQ channels, and this machine cannot resolve ` +
              `that host: give the server a server_name its nodes can reach`,
          );
        const link = this.linkFor(p.config);
        const node = new SimNode(name, behaviour, p.config, i.org, i, this.sink, link, this.curve);
        if (i.recordFile !== null) node.record = fileRecorder(i.recordFile, name);
        this.nodes.push(node);
        done += 1;
        if (p.reused) reused += 1;
      });
    } finally {
      clearInterval(progress);
    }
    await send({ type: 'provisioned', done, reused });
    this.slots = this.nodes.map((node) => ({ node, visits: 0, pausedUntil: 0, nextPauseAt: 0, restartAt: 0 }));
    this.schedule();
    this.flusher = setInterval(() => void this.flush(), BATCH_MS);
    // A wave is counted in connections: nodes sharing one ask for no handshake of their own.
    const waveNodes = WAVE * this.init.nodesPerConnection;
    for (let i = 0; i < this.nodes.length; i += waveNodes) {
      const wave = this.nodes.slice(i, i + waveNodes);
      for (const node of wave) node.connect();
      const until = now() + WAVE_WAIT_MS;
      while (wave.filter((n) => n.heard).length < WAVE_SHARE * wave.length && now() < until) {
        await new Promise((r) => setTimeout(r, 50));
      }
      await send({ type: 'connecting', nodes: i + wave.length });
    }
    await send({ type: 'connected', nodes: this.nodes.length });
  }

  start(): void {
    this.started = true;
  }

  /** The shared connection to `config`'s channels with room for one more node, or null when each has its own. */
  private linkFor(config: PushConfig): SharedLink | null {
    const perLink = this.init.nodesPerConnection;
    if (perLink <= 1) return null;
    const key = endpointKey(config);
    const group = this.links.get(key) ?? [];
    const last = group.at(-1);
    let link = last !== undefined && last.assigned < perLink ? last : group.find((l) => l.assigned < perLink);
    if (link === undefined) {
      const curve = config.curveServerKey === null ? null : this.curve;
      link = new SharedLink(this.init.org, config, curve, randomBytes(16).toString('hex'), {
        drop: (reason) => this.sink.drop(reason),
        error: (detail) => this.sink.error(`shared connection: ${detail}`),
      });
      group.push(link);
      this.links.set(key, group);
    }
    link.assigned += 1;
    return link;
  }

  /** A node left `link` for other channels; the last one out closes it. */
  private release(link: SharedLink, key: string): void {
    link.assigned -= 1;
    if (link.assigned > 0) return;
    link.close();
    const group = (this.links.get(key) ?? []).filter((l) => l !== link);
    if (group.length === 0) this.links.delete(key);
    else this.links.set(key, group);
  }

  /** Queues a config fetch for a node the server has been silent to (SilenceWatch.due said so). */
  private refetch(node: SimNode): void {
    this.refetchQueue.push(node);
    this.pumpRefetches();
  }

  private pumpRefetches(): void {
    while (this.refetching < this.init.apiConcurrency && this.refetchQueue.length > 0) {
      const next = this.refetchQueue.shift() as SimNode;
      this.refetching += 1;
      void this.fetchAgain(next).finally(() => {
        this.refetching -= 1;
        this.pumpRefetches();
      });
    }
  }

  /**
   * Fetches the node's config as the client does after silence: from the next member when the node last had its
   * config from the one in use (that member may be the one that went silent), else from the one in use; moves the
   * node when the config names other channels. A failure is counted, not reported as an error: while a dead
   * process's partitions wait for a new owner, fetches fail.
   */
  private async fetchAgain(node: SimNode): Promise<void> {
    // Every node's first config came from the run's first server (provision.ts).
    this.servers = moveOn(this.servers, node.apiUrl ?? (this.servers.configured[0] as string));
    const baseUrl = this.servers.current;
    const key = this.clientKey as KeyObject;
    let outcome: FetchOutcome = 'failed';
    let retryAfterMs: number | undefined;
    try {
      // As long as the client waits: a frozen member holds the fetch that long, and then the next is asked.
      const api = new ApiClient({ baseUrl, userId: node.name, key, timeoutMs: HTTP_TIMEOUT_MS });
      const orgPath = `/organizations/${encodeURIComponent(this.init.org)}`;
      const config = await fetchPushConfig(api, orgPath, node.name, key, this.curve.publicKey);
      this.servers = learnServers(this.servers, config.servers, this.random).pool;
      node.apiUrl = baseUrl;
      const old = node.config;
      if (endpointKey(config) === endpointKey(old) && config.sessionKey.equals(old.sessionKey)) outcome = 'same';
      else if (!this.stopping) {
        const previous = node.link;
        node.moveTo(config, this.linkFor(config));
        if (previous !== null) this.release(previous, endpointKey(old));
        outcome = 'moved';
      }
    } catch (e) {
      const status = e instanceof ConfigFetchError ? e.status : undefined;
      if (e instanceof ConfigFetchError) retryAfterMs = e.retryAfterMs;
      // Another member answers while this one may be the one that died; one that asks for a wait is waited for.
      if (retryAfterMs === undefined && worthAnotherServer(status)) this.servers = moveOn(this.servers, baseUrl);
    }
    node.watch.done(now(), outcome, retryAfterMs);
    this.batch.refetches[outcome] += 1;
  }

  async stop(cleanup: boolean): Promise<void> {
    clearInterval(this.ticker);
    this.lag.disable();
    clearInterval(this.flusher);
    this.stopping = true;
    this.refetchQueue.length = 0;
    for (const node of this.nodes) node.stop();
    for (const group of this.links.values()) for (const link of group) link.close();
    await this.flush();
    let deleted = 0;
    if (cleanup) {
      const admin = new ApiClient({
        baseUrl: this.init.baseUrl,
        userId: this.init.user,
        key: this.init.userKeyPem,
        timeoutMs: 30_000,
      });
      await pool(this.init.nodes, this.init.apiConcurrency, async ({ name }) => {
        await deleteNode(admin, this.init.org, name);
        deleted += 1;
      });
    }
    await send({ type: 'stopped', deleted });
  }

  private async flush(): Promise<void> {
    const b = this.batch;
    const empty =
      this.tallies.size === 0 &&
      b.heartbeatsSent === 0 &&
      b.answersSent === 0 &&
      b.serverHeartbeats === 0 &&
      b.nodesHeard === 0 &&
      b.held === 0 &&
      b.errors.length === 0 &&
      b.flaps.length === 0 &&
      b.crashes.length === 0 &&
      b.refetches.moved + b.refetches.same + b.refetches.failed === 0 &&
      Object.keys(b.drops).length === 0;
    if (empty) return;
    const jobs = Object.fromEntries(this.tallies);
    this.tallies.clear();
    this.batch = Worker.emptyBatch();
    // The histogram's max is 0 before its first sample, and in nanoseconds.
    b.lagMaxMs = Math.round(this.lag.max / 1e6);
    this.lag.reset();
    await send({ ...b, jobs });
  }

  /** Every node is visited once per interval, in its own slot; time decides which slots are due. */
  private schedule(): void {
    const first = this.nodes[0];
    if (first === undefined) return;
    const interval = first.config.intervalMs;
    const threshold = first.config.offlineThreshold;
    const slotCount = Math.max(1, Math.round(interval / TICK_MS));
    const t0 = now();
    let visited = 0;
    this.lag.enable();
    this.ticker = setInterval(() => {
      const at = now();
      const due = Math.floor(((at - t0) / interval) * slotCount);
      for (; visited <= due; visited++) {
        const slot = visited % slotCount;
        for (let i = slot; i < this.slots.length; i += slotCount)
          this.visit(this.slots[i] as Slot, at, interval, threshold);
      }
    }, TICK_MS);
  }

  private visit(s: Slot, at: number, interval: number, threshold: number): void {
    const node = s.node;
    s.visits += 1;
    if (node.crashed) {
      if (s.restartAt === 0) s.restartAt = at + (threshold + SILENCE_EXTRA_INTERVALS) * interval;
      if (at < s.restartAt) return;
      s.restartAt = 0;
      node.restart();
      this.batch.crashes.push({ node: node.name, kind: 'restart', at });
    }
    // One comparison while the server speaks; past the client's silence, the config is fetched again.
    if (node.connected && node.watch.due(at)) this.refetch(node);
    if (this.started && node.behaviour.flap) {
      if (s.pausedUntil > at) return;
      if (s.pausedUntil !== 0) {
        s.pausedUntil = 0;
        s.nextPauseAt = 0;
        this.batch.flaps.push({ node: node.name, kind: 'resume', at, due: 0 });
      }
      if (s.nextPauseAt === 0) s.nextPauseAt = at + (FLAP_UP_INTERVALS + this.random() * FLAP_UP_INTERVALS) * interval;
      else if (at >= s.nextPauseAt) {
        s.pausedUntil = at + (threshold + SILENCE_EXTRA_INTERVALS) * interval;
        const due = node.lastBeatAt + threshold * interval;
        this.batch.flaps.push({ node: node.name, kind: 'stop', at: node.lastBeatAt, due });
        return;
      }
    }
    // Late: one beat every threshold - 1 intervals, so the silence stays just inside the offline window.
    if (this.started && this.init.lateHeartbeats && s.visits % Math.max(1, threshold - 1) !== 0) return;
    if (node.heartbeat()) this.batch.heartbeatsSent += 1;
  }
}

let worker: Worker | undefined;

process.on('disconnect', () => process.exit(1));
process.on('message', (raw: unknown) => {
  const parsed = parentMessageSchema.safeParse(raw);
  if (!parsed.success) {
    void send({ type: 'failed', message: `bad message from the parent: ${parsed.error.message}` });
    return;
  }
  const m = parsed.data;
  const fail = (e: unknown) => void send({ type: 'failed', message: messageOf(e) });
  switch (m.type) {
    case 'init':
      worker = new Worker(m);
      worker.provision().catch(fail);
      break;
    case 'start':
      worker?.start();
      break;
    case 'stop':
      (worker?.stop(m.cleanup) ?? send({ type: 'stopped', deleted: 0 })).then(
        () => process.exit(0),
        (e: unknown) => {
          fail(e);
          setTimeout(() => process.exit(1), 100);
        },
      );
      break;
  }
});
