// An organization's push-jobs children: it spawns job actors and node followers, routes their reports into the
// organization's push data, writes node states behind in batches, and answers the requests a job actor, the
// store or the transport must answer. It runs inside the organization actor's turn and holds the only live
// references to those children.
import { dispatch, query, type Ref } from 'nact';
import type { JobBody } from '../../src/api/push-jobs.js';
import { configBody } from './config-answer.js';
import { FinishedJobs } from './finished-jobs.js';
import { parseHttpDate } from '../../src/lib/dates.js';
import {
  jobOutputsCollection,
  jobsCollection,
  NODE_STATES_MAP,
  nodeStatesCollection,
} from '../../src/store/collections.js';
import { fail, ok, storeFailure, type Reply } from '../shared/reply.js';
import { spawnSupervised } from '../shared/supervision.js';
import { answerAbout, answerFinished, spawnJob, type JobHandle, type JobMsg } from './job.js';
import type { JobState } from './job-model.js';
import { headerOf, loadJob, purgeJobs, saveOf, writeJob, type JobHeader } from './job-store.js';
import { isFinished } from '../../src/push/job-states.js';
import { newNode } from './node-machine.js';
import { NodeFollower, sweepNodes, type AvailabilityChange } from './node.js';
import type { PushPorts } from './ports.js';
import { gatewayGoneGrace, restoredNodeGrace } from './node-graces.js';
import type { NodeAvailability, PushData, StoredNodeRecord } from './push-data.js';
import type { NodeEvent } from '../../src/cluster/node-link-messages.js';

/** Messages the organization actor takes from its push-jobs children and timers. */
export type PushReport =
  | { type: 'node_availability'; node: string; change: AvailabilityChange }
  | { type: 'job_saved'; header: JobHeader }
  | { type: 'job_finished'; id: string; final: JobBody }
  | { type: 'job_retired'; id: string }
  /** A new job is stored (saveNewJob): start it; its actor sends the request `reply` once started. */
  | { type: 'job_stored'; job: JobState; replyTo: Ref<Reply>; reply: Reply }
  | { type: 'push_tick' }
  /** What a gateway (another process) heard from nodes of this organization; `stored` is told when it is stored. */
  | { type: 'gateway_events'; gateway: string; events: readonly NodeEvent[]; stored: (saved: Promise<void>) => void }
  /** Members of the cluster left: nodes connected to them are watched here until they connect elsewhere. */
  | { type: 'gateways_gone'; gateways: ReadonlySet<string> };

/**
 * A finished job's actor lives on this long, as the original's job process did: a node answering late (a commit
 * acked after the voting timeout) still meets the job's own table and is told to let that job go.
 */
export const JOB_LINGER_MS = 5000;

/**
 * Sweeps of the nodes an interval (see sweep): a node is marked down within a twentieth of an interval of its
 * `offline_threshold` running out, and its unanswered rehab abort resent as soon after an interval.
 */
export const SWEEPS_PER_INTERVAL = 20;

/**
 * How often finished jobs past job_retention_days are looked for (or every half retention period, when shorter),
 * and how many one pass removes at most.
 */
const PURGE_EVERY_MS = 3_600_000;
const PURGE_BATCH = 1000;
const DAY_MS = 86_400_000;
/** A release waits for its jobs as long as it takes (nact's longest timer): what they were told must be stored. */
const NO_TIMEOUT_MS = 2_147_483_647;

export class PushRuntime {
  /**
   * The parent of the organization's job actors (its node followers run on synchronous mailboxes, node.ts). nact
   * copies an actor's children into every message's context: they live under this actor, which takes none.
   */
  private fleetRef: Ref<never> | undefined;
  private readonly jobs = new Map<string, JobHandle>();
  /** Jobs retired (their actors stopped) whose last saves have not landed yet. */
  private readonly retired = new Set<JobHandle>();
  private readonly nodes = new Map<string, NodeFollower>();
  /** How finished jobs answer while they are among the latest. */
  private readonly finished = new FinishedJobs();
  /** Node records changed since the last write-behind flush. */
  private readonly dirty = new Set<string>();
  /** The node-state write under way (or the last one, settled): it never rejects, whatever the write did. */
  private flushing: Promise<void> = Promise.resolve();
  private nextPurge = 0;
  /** The purge writing to the store now, if any: a stopping server waits for it. */
  private purging: Promise<void> | null = null;
  /** New jobs being stored (saveNewJob), each settled once its start is handed on. */
  private readonly storing = new Set<Promise<void>>();
  /** Set when a release is asked for: new jobs stored from then on start at once, without the actor's turn. */
  private releasing = false;
  /** Set once the release runs: the organization is served elsewhere, and nothing more reaches its actor. */
  private released = false;

  constructor(
    private readonly org: string,
    private readonly data: PushData,
    private readonly ports: PushPorts,
    private readonly self: () => Ref<PushReport>,
  ) {}

  /**
   * Resumes the jobs in flight and the nodes that were up when the server stopped, just before the transport starts
   * reading. Those nodes' silence clocks start late (one offline window, and more for a large fleet): their clients
   * must notice the restart and reconnect first.
   */
  resume(inFlight: readonly JobState[]): void {
    this.upFromJobs(inFlight);
    const up = [...this.data.records].filter(([, r]) => r.status === 'up').map(([node]) => node);
    const grace = restoredNodeGrace(this.ports.settings, up.length);
    for (const node of up) this.follow(node, grace);
    // Nodes connected to other processes keep their connections: those gateways say so, and they are not watched.
    this.ports.cluster.rollCall(this.org);
    for (const job of inFlight)
      dispatch(this.spawnJobActor(job), { type: 'begin', available: this.availableOf(job), restored: true });
  }

  /**
   * A node that a job in flight records as ready or running answered that job, so it was up, even if its record
   * says otherwise: node states are written behind, and the process that owned the organization may have died
   * before writing that the node came up. So was a node a voting job still records as `new`: the job sent it a
   * commit, which it does only to available nodes, and has not heard it go down since. Each is restored `up` like
   * the others (no rehab, which would abort the command it runs), and goes down if it is not heard within the grace.
   */
  private upFromJobs(inFlight: readonly JobState[]): void {
    const at = this.ports.now();
    for (const job of inFlight) {
      for (const [node, status] of Object.entries(job.nodes)) {
        const asked = status === 'ready' || status === 'running' || (status === 'new' && job.status === 'voting');
        if (!asked) continue;
        const saved = this.data.records.get(node);
        if (saved?.status === 'up') continue;
        this.data.records.set(node, {
          node_name: node,
          status: 'up',
          updated_at: at,
          // Which client process it was is not known either: the first one heard takes it.
          incarnation: null,
          available: true,
        });
      }
    }
  }

  /**
   * The actor of a node, spawned on its first authenticated message here (never for unverified input): the node was
   * just heard at this gateway, where it was not followed before.
   */
  nodeFollower(node: string): NodeFollower {
    const live = this.nodes.get(node);
    if (live) return live;
    const actor = this.follow(node, 0);
    this.reached(node);
    return actor;
  }

  /** A node followed here, its silence counted from `graceMs` from now (or its actor already). */
  private follow(node: string, graceMs: number): NodeFollower {
    const live = this.nodes.get(node);
    if (live) return live;
    const saved = this.data.records.get(node);
    const config = this.ports.settings;
    const at = this.ports.now() + graceMs;
    const initial = newNode(
      saved
        ? {
            node_name: node,
            config,
            at,
            saved: {
              node_name: node,
              status: saved.status,
              updated_at: saved.updated_at,
              incarnation: saved.incarnation,
            },
          }
        : { node_name: node, config, at },
    );
    const actor = new NodeFollower(initial, this.org, this.ports, {
      availability: (n, change) => this.tellOrg({ type: 'node_availability', node: n, change }),
      runs: (id) => this.jobs.has(id),
      answer: (n, _at, message) => {
        const job = message.job_id === null ? undefined : this.jobs.get(message.job_id);
        if (job) dispatch(job.ref, { type: 'answer', node: n, message });
      },
      send: (n, message) => this.ports.transport.send(this.org, n, message),
    });
    this.nodes.set(node, actor);
    return actor;
  }

  /**
   * The node was just heard at a gateway it was not heard at before (this process, or another's 'attached'): a job
   * still waiting for its vote asks it again there, as a commit sent before may have gone to channels it left.
   */
  private reached(node: string): void {
    for (const job of this.jobs.values()) dispatch(job.ref, { type: 'node_reached', node });
  }

  /**
   * Ticks the nodes that have something due: silence past the offline threshold (and the server's lag), or a
   * rehab abort to resend. Node followers run on synchronous mailboxes, so this needs no message; a node with nothing
   * due costs a read of a few fields, not a step of its machine.
   */
  sweep(): void {
    if (this.nodes.size === 0) return;
    const at = this.ports.now();
    sweepNodes(this.nodes.values(), at, this.ports.lag.lag(at));
  }

  /** When the node's last heartbeat arrived, if it has been heard since this server started. */
  lastHeartbeat(node: string): number | undefined {
    return this.nodes.get(node)?.lastHeartbeatAt;
  }

  report(msg: PushReport): void {
    switch (msg.type) {
      case 'job_saved':
        this.data.headers.set(msg.header.id, msg.header);
        break;
      case 'job_finished':
        this.finished.remember(msg.id, msg.final);
        setTimeout(() => this.tellOrg({ type: 'job_retired', id: msg.id }), JOB_LINGER_MS).unref();
        break;
      case 'job_stored':
        this.startJob(msg.job, { replyTo: msg.replyTo, reply: msg.reply });
        break;
      case 'job_retired': {
        // Forgotten first, then stopped by a message: requests already forwarded to it are answered before. Its
        // saves go on until its final record is stored (the store may be away), and are waited for by a release.
        const job = this.jobs.get(msg.id);
        this.jobs.delete(msg.id);
        if (job) {
          dispatch(job.ref, { type: 'stop' });
          this.retired.add(job);
          const forget = () => this.retired.delete(job);
          job.stored().then(forget, forget);
        }
        this.ports.cluster.jobOver(this.org, msg.id);
        break;
      }
      case 'node_availability':
        this.nodeChanged(msg.node, msg.change);
        break;
      case 'gateway_events':
        // Released meanwhile: nothing of it can be stored here, and the entry waits for the new owner.
        msg.stored(this.released ? Promise.reject(new Error('released')) : this.fromGateway(msg.gateway, msg.events));
        break;
      case 'gateways_gone':
        this.watchNodesOf(msg.gateways);
        break;
      case 'push_tick': {
        const at = this.ports.now();
        this.flush().catch(() => undefined); // logged; the states are written again at the next tick
        if (at >= this.nextPurge) this.purge(at);
        break;
      }
    }
  }

  /** `gateway`: the member whose gateway reported the change; undefined for this owner's own follower. */
  private nodeChanged(node: string, change: AvailabilityChange, gateway?: string): void {
    const { status, updated_at, incarnation, available } = change;
    const record = { node_name: node, status, updated_at, incarnation, available };
    this.data.records.set(node, gateway === undefined ? record : { ...record, gateway });
    this.dirty.add(node);
    if (status === 'down') this.ports.transport.nodeDown(this.org, node);
    if (!available) for (const job of this.jobs.values()) dispatch(job.ref, { type: 'node_down', node });
  }

  /**
   * Applies what a gateway heard, in order; resolves once it is stored. Only the gateway that speaks for the node
   * counts (see PushCluster.heardAt). A node a gateway holds is no longer watched here (see watchNodesOf).
   */
  private fromGateway(gateway: string, events: readonly NodeEvent[]): Promise<void> {
    const { transport, cluster } = this.ports;
    const stored: Array<Promise<unknown>> = [];
    for (const e of events) {
      if (!cluster.heardAt(this.org, e.node, gateway)) {
        this.ports.counters.inc('node_ignored', 'not_its_gateway');
        continue;
      }
      if ((e.t === 'attached' || e.t === 'availability') && this.isLateCopy(e.node, gateway, e.change)) {
        this.ports.counters.inc('node_ignored', 'stale_report');
        continue;
      }
      switch (e.t) {
        case 'attached': {
          this.nodes.delete(e.node);
          const known = this.data.records.get(e.node);
          // A gateway that just heard the node made its actor from the stored record, which may be older than this
          // owner's (node states are written behind; a job in flight vouches for its nodes): this record stands.
          if (known?.status === 'up' && e.change.status === 'down') cluster.nodeState(this.org, e.node, gateway, known);
          else this.nodeChanged(e.node, e.change, gateway);
          this.reached(e.node);
          break;
        }
        case 'availability':
          this.nodes.delete(e.node);
          this.nodeChanged(e.node, e.change, gateway);
          break;
        case 'answer': {
          // A job no longer live ended, and its record is stored: the answer changes nothing of it. A result for it
          // (its gateway did not know it had ended) is acknowledged, as node.ts does here.
          const id = e.message.job_id;
          const job = id === null ? undefined : this.jobs.get(id);
          if (!job && id !== null && (e.message.type === 'succeeded' || e.message.type === 'failed'))
            transport.send(this.org, e.node, { type: 'ack_result', job_id: id });
          if (!job) break;
          // Told in this turn, before any stop of the job (job_retired comes through this actor's mailbox too), so
          // the job handles the answer and says when its change is stored, or that the store refused it.
          stored.push(
            new Promise<void>((resolve, reject) =>
              dispatch(job.ref, {
                type: 'answer',
                node: e.node,
                message: e.message,
                stored: (saved) => void saved.then(resolve, reject),
              }),
            ),
          );
          break;
        }
        case 'holds':
          if (!this.jobs.has(e.job)) cluster.jobOver(this.org, e.job, gateway);
          break;
      }
    }
    return Promise.all([this.flush(), ...stored]).then(() => undefined);
  }

  /**
   * Whether a gateway's report of a node is older than the one it made before, which the record holds: an inbox
   * entry applied again after newer ones (claimed from an owner that died before acknowledging it). Reports of one
   * gateway share its clock; those of two gateways are ordered by which one speaks for the node (heardAt).
   */
  private isLateCopy(node: string, gateway: string, change: AvailabilityChange): boolean {
    const known = this.data.records.get(node);
    return known?.gateway === gateway && change.updated_at < known.updated_at;
  }

  /**
   * Members left: the nodes that were up behind them are watched here, as after a restart, until they connect to
   * another gateway (their clients fetch their config again) or their silence marks them down. They are given what
   * their clients take to find another member: the silence they wait out (twice the offline window), the time the
   * cluster's partitions take to settle, and config requests that go unanswered by members frozen or gone. A node
   * running a command is counted `crashed` only once that has passed.
   */
  private watchNodesOf(gone: ReadonlySet<string>): void {
    const grace = gatewayGoneGrace(this.ports.settings);
    for (const [node, record] of this.data.records) {
      const gateway = this.ports.cluster.gatewayOf(this.org, node);
      if (record.status === 'up' && gateway !== undefined && gone.has(gateway)) this.follow(node, grace);
    }
  }

  /**
   * Write-behind of node states: one batch per tick, never one write per heartbeat. Batches go one after another,
   * so a later state never lands before an earlier one, and waiting for a flush waits for the one under way. Rejects
   * when the store did not take the batch (the states are kept for the next one): what a gateway said is then not
   * acknowledged, and is applied again.
   */
  flush(): Promise<void> {
    const write = this.flushing.then(() => this.writeDirty());
    this.flushing = write.catch(() => undefined);
    return write;
  }

  /** A flush whose failure is logged and left for the next tick: a stop or a release waits for it all the same. */
  private settled(): Promise<void> {
    return this.flush().catch(() => undefined);
  }

  private async writeDirty(): Promise<void> {
    if (this.dirty.size === 0) return;
    const docs = [...this.dirty].flatMap((n) => {
      const r = this.data.records.get(n);
      return r ? [[n, storedOf(r)] as const] : [];
    });
    this.dirty.clear();
    try {
      await this.ports.store.putFields(nodeStatesCollection(this.org), NODE_STATES_MAP, docs);
    } catch (e) {
      for (const [n] of docs) this.dirty.add(n);
      this.ports.log.error('saving node states failed; they are kept for the next tick', { org: this.org, error: e });
      throw e;
    }
  }

  /**
   * Retention: finished jobs last changed more than job_retention_days ago leave the job list at once, then
   * the store (header first, so a purge cut short leaves nothing the API shows), a batch per pass; a pass that
   * found a full batch runs again on the next tick.
   */
  private purge(now: number): void {
    const days = this.ports.settings.job_retention_days;
    if (days === 0 || this.purging !== null) return;
    const before = now - days * DAY_MS;
    const expired: string[] = [];
    for (const [id, h] of this.data.headers) {
      if (isFinished(h.status) && h.updated_at < before && !this.jobs.has(id)) expired.push(id);
      if (expired.length === PURGE_BATCH) break;
    }
    this.nextPurge = expired.length === PURGE_BATCH ? now : now + Math.min(PURGE_EVERY_MS, (days * DAY_MS) / 2);
    if (expired.length === 0) return;
    for (const id of expired) {
      this.data.headers.delete(id);
      this.finished.forget(id);
    }
    this.purging = purgeJobs(this.ports.store, this.org, expired)
      .then(() =>
        this.ports.log.info('purged finished jobs past job_retention_days', {
          org: this.org,
          jobs: expired.length,
          days,
        }),
      )
      .catch((e: unknown) => {
        // Gone from the list already; what is left in the store is looked for again after a restart.
        this.ports.log.error('purging finished jobs failed', { org: this.org, error: e });
      })
      .finally(() => (this.purging = null));
  }

  /** Resolves once the node states and every job's changes are stored: a stopping server waits for it. */
  async whenSaved(): Promise<void> {
    await Promise.all([
      this.settled(),
      this.purging,
      ...this.storing,
      ...[...this.jobs.values(), ...this.retired].map((job) => job.saved()),
    ]);
  }

  /**
   * A release is asked for, and runs once the actor's mailbox reaches it: a new job stored meanwhile starts at
   * once, since a `job_stored` sent now would only arrive after the release.
   */
  releaseAsked(): void {
    this.releasing = true;
  }

  /**
   * The organization is to be served by another process, which restores it from the store: new jobs being stored
   * start (and are answered) first, every job handles what it was told before and stops, then everything is
   * stored. Nothing reaches the organization's actor from its children or timers afterwards: an organization
   * adopted again here has an actor of the same name.
   */
  async release(): Promise<void> {
    this.releasing = true;
    this.released = true;
    await Promise.all(this.storing);
    const jobs = [...this.jobs.values()];
    this.jobs.clear();
    // A job's mailbox is handled in order, so its answer says everything told before is handled. A job its crash
    // policy stopped answers at once with a rejection; its state was saved `crashed`.
    await Promise.all(
      jobs.map((job) =>
        query(job.ref, (replyTo: Ref<true>) => ({ type: 'stop' as const, replyTo }), NO_TIMEOUT_MS).catch(
          () => undefined,
        ),
      ),
    );
    const all = [...jobs, ...this.retired];
    for (const job of all) job.letGo();
    await Promise.all([this.settled(), this.purging, ...all.map((job) => job.saved())]);
  }

  /**
   * The store lost what it held: node states, every job's header, the finished jobs still in memory (their
   * nodes' statuses and times; exit statuses and captured output of those are gone), and live jobs whole.
   */
  async writeBack(): Promise<void> {
    const { store } = this.ports;
    const records = [...this.data.records].map(([n, r]) => [n, storedOf(r)] as const);
    await store.putFields(nodeStatesCollection(this.org), NODE_STATES_MAP, records);
    await store.putMany(jobsCollection(this.org), [...this.data.headers]);
    for (const [id, { body }] of this.finished.entries()) {
      const fields = Object.entries(body.nodes).flatMap(([status, names]) =>
        names.map((n) => [n, { status, at: parseHttpDate(body.node_updated_at[n] ?? body.created_at) ?? 0 }] as const),
      );
      await store.putFields(jobsCollection(this.org), id, fields);
    }
    for (const job of this.jobs.values()) dispatch(job.ref, { type: 'write_back' });
  }

  /** The organization is gone: nothing of it may be written any more. */
  dropPending(): void {
    this.dirty.clear();
  }

  /**
   * Saves a new job without holding up the organization (other requests, other jobs' starts): once it is
   * stored, `job_stored` comes back to the organization, which starts it and answers the request. A job the
   * store refuses never starts, and its request gets the store's failure.
   */
  saveNewJob(job: JobState, replyTo: Ref<Reply>, reply: Reply): void {
    const stored = writeJob(this.ports.store, this.org, job.id, saveOf(job)).then(
      () => {
        // Released meanwhile: the job starts here, before the release stops it and hands it over running.
        if (this.releasing) this.startJob(job, { replyTo, reply });
        else dispatch(this.self(), { type: 'job_stored', job, replyTo, reply });
      },
      (e: unknown) => dispatch(replyTo, storeFailure(this.ports.log, e)),
    );
    this.storing.add(stored);
    void stored.finally(() => this.storing.delete(stored));
  }

  /** Starts the actor of a new job, stored by saveNewJob; it sends the request's answer once it has started. */
  startJob(job: JobState, answer: { replyTo: Ref<Reply>; reply: Reply }): void {
    this.data.headers.set(job.id, headerOf(job));
    dispatch(this.spawnJobActor(job), { type: 'begin', available: this.availableOf(job), restored: false, answer });
  }

  /** A live job shows itself as stored and its actor takes an abort; a finished job's stored record answers. */
  answerFromJob(id: string, request: 'get' | 'abort', replyTo: Ref<Reply>): void {
    const live = this.jobs.get(id);
    if (live) {
      if (request === 'get') dispatch(replyTo, live.shown());
      else dispatch(live.ref, { type: 'abort', replyTo });
      return;
    }
    const final = this.finished.get(id);
    if (final) {
      dispatch(replyTo, answerFinished(final, request));
      return;
    }
    this.answerLater(replyTo, async () => {
      const job = await loadJob(this.ports.store, this.org, id);
      return job === undefined ? fail(404, `Cannot find job ${id}`) : answerAbout(job, request, true);
    });
  }

  answerWithOutput(id: string, node: string, channel: 'stdout' | 'stderr', replyTo: Ref<Reply>): void {
    this.answerLater(replyTo, async () => {
      const raw = (await this.ports.store.get(jobOutputsCollection(this.org), `${id}/${node}`)) as
        { stdout?: string; stderr?: string; truncated?: boolean } | undefined;
      const text = raw?.[channel];
      if (typeof text !== 'string') return fail(404, `No ${channel} captured for node ${node} in job ${id}`);
      return { status: 200, body: text, raw: true, truncated: raw?.truncated === true };
    });
  }

  /** The config endpoint's answer: where to connect, and a session key only `requesterKey` can read. */
  answerWithConfig(node: string, requesterKey: string, replyTo: Ref<Reply>, ccpk?: string): void {
    const { transport, settings } = this.ports;
    this.answerLater(replyTo, async () => {
      const grant = await transport.openSession(this.org, node, ccpk);
      return ok(configBody(this.org, node, grant, settings, requesterKey));
    });
  }

  /** Store reads and session keys answer outside the organization's turn: they change nothing it holds. */
  private answerLater(replyTo: Ref<Reply>, answer: () => Promise<Reply>): void {
    answer().then(
      (reply) => dispatch(replyTo, reply),
      (e: unknown) => {
        this.ports.log.error('answering a push-jobs request failed', { org: this.org, error: e });
        dispatch(replyTo, fail(503, 'The data store is unavailable. Try again.'));
      },
    );
  }

  private tellOrg(msg: PushReport): void {
    if (!this.released) dispatch(this.self(), msg);
  }

  private fleet(): Ref<never> {
    this.fleetRef ??= spawnSupervised<null, never>(
      this.self(),
      { name: 'fleet', initial: null, receive: () => null, onCrash: () => null },
      this.ports.reporter,
    );
    return this.fleetRef;
  }

  /** The job's nodes that are available now: one lookup per node of the job, not a pass over the fleet. */
  private availableOf(job: JobState): Set<string> {
    const available = new Set<string>();
    for (const node in job.nodes) if (this.data.records.get(node)?.available === true) available.add(node);
    return available;
  }

  private spawnJobActor(job: JobState): Ref<JobMsg> {
    const handle = spawnJob(this.fleet(), this.org, job, this.ports, {
      saved: (header) => this.tellOrg({ type: 'job_saved', header }),
      finished: (id, final) => this.tellOrg({ type: 'job_finished', id, final }),
    });
    this.jobs.set(job.id, handle);
    return handle.ref;
  }
}

/** A node's record as stored: what it was told, without what jobs may make of it now. */
function storedOf(r: NodeAvailability): StoredNodeRecord {
  const { node_name, status, updated_at, incarnation, gateway } = r;
  return gateway === undefined
    ? { node_name, status, updated_at, incarnation }
    : { node_name, status, updated_at, incarnation, gateway };
}
