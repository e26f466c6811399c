// A worker process of infra-loadtest: it provisions its share of the nodes, connects them, sends their
// heartbeats from one scheduler, answers jobs through them and reports to the parent in batches.
import type { KeyObject } from 'node:crypto';
import { context, curveKeyPair } from 'zeromq';
import { ApiClient } from '../auth/api-client.js';
import { readPrivateKey, toSpkiPem } from '../auth/rsa-keys.js';
import { messageOf } from '../lib/thrown.js';
import { delay, type Timers } from '../lib/timers.js';
import { unresolvedEndpoints } from '../protocol/endpoint-host.js';
import { receiveIntoOwnMemory } from '../protocol/zmq-context.js';
import { Batches } from './batches.js';
import { seededRandom } from './behaviour.js';
import { testerTimers } from './clock.js';
import { ConfigRefetcher } from './config-refetch.js';
import { HeartbeatSchedule } from './heartbeat-schedule.js';
import { parentMessageSchema, type WorkerInit, type WorkerMessage } from './ipc.js';
import { LinkGroups } from './link-groups.js';
import { fileRecorder } from './node-record.js';
import { deleteNode, listKnown, pool, provisionNode, type ProvisionTarget } from './provision.js';
import { SimNode } from './sim-node.js';

const BATCH_MS = 200;
const PROGRESS_MS = 250;
/**
 * Nodes connect in waves: the next wave once most of this one hears the server, or after a while. A whole fleet
 * connecting at once makes thousands of CurveZMQ handshakes queue on the server, and connections time out.
 */
const WAVE = 250;
const WAVE_SHARE = 0.9;
const WAVE_WAIT_MS = 5000;
/** How often a wave's nodes are looked at for whether they heard the server. */
const WAVE_POLL_MS = 50;

function send(m: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined || !process.connected) return resolve();
    process.send(m, undefined, {}, () => resolve());
  });
}

class Worker {
  private readonly nodes: SimNode[] = [];
  /**
   * The Curve key pair of every connection this worker opens, as one client process keeps one pair (reference 2.2):
   * each node names it in its config requests, so the server admits it for each of them.
   */
  private readonly curve = curveKeyPair();
  private readonly batches = new Batches();
  private readonly links: LinkGroups;
  private readonly random = seededRandom(process.pid);
  private readonly refetcher: ConfigRefetcher;
  private readonly schedule: HeartbeatSchedule;
  private stopFlushing: (() => void) | undefined;

  constructor(
    private readonly init: WorkerInit,
    private readonly timers: Timers = testerTimers,
  ) {
    this.links = new LinkGroups(init.org, init.nodesPerConnection, this.curve, this.batches.sink);
    this.refetcher = new ConfigRefetcher(init, this.curve.publicKey, this.links, this.random, this.batches);
    this.schedule = new HeartbeatSchedule(
      this.nodes,
      {
        batches: this.batches,
        lateHeartbeats: init.lateHeartbeats,
        random: this.random,
        refetch: (node) => this.refetcher.add(node),
      },
      timers,
    );
  }

  async provision(): Promise<void> {
    const i = this.init;
    // Two sockets a connection, and a few spare: zeromq's default of 1023 would stop a worker at about 500 nodes.
    const connections = Math.ceil(i.nodes.length / i.nodesPerConnection);
    context.maxSockets = Math.min(context.maxSocketsLimit, Math.max(context.maxSockets, connections * 2 + 64));
    // As the server: a commit or run read from each of thousands of connections would each hold a read buffer.
    receiveIntoOwnMemory();
    const clientKey = readPrivateKey(i.clientKeyPem);
    this.refetcher.signWith(clientKey);
    await this.provisionNodes(clientKey);
    this.schedule.run();
    this.stopFlushing = this.timers.every(BATCH_MS, () => void this.flush());
    await this.connectInWaves();
  }

  /** Every node of this share made (or found) on the server with its config, reported as it goes. */
  private async provisionNodes(clientKey: KeyObject): Promise<void> {
    const i = this.init;
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
    const stopProgress = this.timers.every(PROGRESS_MS, () => void send({ type: 'provisioned', done, reused }));
    try {
      const known = await listKnown(target.admin, i.org);
      await pool(i.nodes, i.apiConcurrency, async ({ name, behaviour, wave }) => {
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
        const link = this.links.linkFor(p.config);
        const sink = this.batches.sinkFor(wave);
        const node = new SimNode(name, behaviour, p.config, i.org, i, sink, link, this.curve, this.timers);
        if (i.recordFile !== null) node.record = fileRecorder(i.recordFile, name);
        this.nodes.push(node);
        done += 1;
        if (p.reused) reused += 1;
      });
    } finally {
      stopProgress();
    }
    await send({ type: 'provisioned', done, reused });
  }

  private async connectInWaves(): Promise<void> {
    // A wave is counted in connections: nodes sharing one ask for no handshake of their own.
    const waveNodes = WAVE * this.init.nodesPerConnection;
    for (let i = 0; i < this.nodes.length; i += waveNodes) {
      const wave = this.nodes.slice(i, i + waveNodes);
      for (const node of wave) node.connect();
      const until = this.timers.now() + WAVE_WAIT_MS;
      while (wave.filter((n) => n.heard).length < WAVE_SHARE * wave.length && this.timers.now() < until) {
        await delay(this.timers, WAVE_POLL_MS);
      }
      await send({ type: 'connecting', nodes: i + wave.length });
    }
    await send({ type: 'connected', nodes: this.nodes.length });
  }

  start(): void {
    this.schedule.begin();
  }

  async stop(cleanup: boolean): Promise<void> {
    this.schedule.stop();
    this.batches.lag.disable();
    this.stopFlushing?.();
    this.refetcher.stop();
    for (const node of this.nodes) node.stop();
    this.links.closeAll();
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
    const batch = this.batches.take();
    if (batch !== null) await send(batch);
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
          // The process ends once the failure has had a moment to reach the parent: nothing here runs after.
          setTimeout(() => process.exit(1), 100);
        },
      );
      break;
  }
});
