// What an organization's push supervisor holds (push-supervisor.ts runs it): the job actors and node followers,
// the job list and node records they report into, the write-behind of node states and the retention of finished
// jobs. It runs only in the supervisor's turns, but for the transport's calls for a node's follower and the
// metrics' counts, both read between turns.
import { dispatch, query, type Ref } from 'nact';
import { jobsCollection, schedulesCollection } from '../../src/store/collections.js';
import type { Reply } from '../shared/reply.js';
import { spawnSupervised } from '../shared/supervision.js';
import { FinishedJobs } from './finished-jobs.js';
import { applyGatewayEvents, type EventsRuntime } from './gateway-events.js';
import type { JobMsg } from './job-messages.js';
import { spawnJob, type JobHandle } from './job.js';
import type { JobState } from './job-model.js';
import { JobRetention } from './job-retention.js';
import { newNode } from './node-machine.js';
import { upFromJobs } from './restored-nodes.js';
import { gatewayGoneGrace, restoredNodeGrace } from './node-graces.js';
import { NodeStateWrites } from './node-state-writes.js';
import { NodeFollower, sweepNodes, type AvailabilityChange } from './node.js';
import type { PushPorts } from './ports.js';
import { answerPush, type AnswerSources } from './push-answers.js';
import { nodeRecordOf, type PushData } from './push-data.js';
import { isScheduleRequest, type PushReport, type PushRequest } from './push-requests.js';
import { Schedules } from './schedules.js';

/**
 * A finished job's actor lives on this long, as the original's job process did: a node answering late (a commit
 * acked after the voting timeout) still meets the job's own table and is told to let that job go.
 */
export const JOB_LINGER_MS = 5000;

/** A release waits for its jobs as long as it takes (nact's longest timer): what they were told must be stored. */
const NO_TIMEOUT_MS = 2_147_483_647;

export class PushRuntime implements EventsRuntime {
  /**
   * The parent of the organization's job actors (its node followers run on synchronous mailboxes, node.ts). nact
   * copies an actor's children into every message's context: they live under this actor, which takes none.
   */
  private jobsRef: Ref<never> | undefined;
  private readonly jobs = new Map<string, JobHandle>();
  /** Jobs retired (their actors stopped) whose last saves have not landed yet. */
  private readonly retired = new Set<JobHandle>();
  private readonly nodes = new Map<string, NodeFollower>();
  /** How finished jobs answer while they are among the latest. */
  private readonly finished = new FinishedJobs();
  private readonly writes: NodeStateWrites;
  private readonly retention: JobRetention;
  /** Set once the release runs: the organization is served elsewhere, and nothing more reaches the supervisor. */
  private released = false;
  /** Set once the organization is deleted: a job being stored never starts. */
  private deleted = false;
  /** What stops the ticks (write-behind and retention) and the sweeps of silent nodes. */
  private readonly ticks: Array<() => void> = [];
  readonly records: PushData['records'];
  private readonly answerSources: AnswerSources;
  private readonly schedules: Schedules;

  constructor(
    readonly org: string,
    private readonly data: PushData,
    readonly ports: PushPorts,
    private readonly self: () => Ref<PushReport>,
  ) {
    this.records = data.records;
    this.answerSources = {
      org,
      ports,
      data,
      finished: this.finished,
      live: (id) => this.jobs.get(id),
      lastHeartbeat: (node) => this.nodes.get(node)?.lastHeartbeatAt,
    };
    this.writes = new NodeStateWrites(org, data.records, ports.store, ports.log);
    this.retention = new JobRetention({
      org,
      headers: data.headers,
      store: ports.store,
      log: ports.log,
      days: ports.settings.job_retention_days,
      live: (id) => this.jobs.has(id),
      forget: (id) => this.finished.forget(id),
    });
    this.schedules = new Schedules(
      org,
      data.schedules,
      ports,
      {
        running: (id) => this.jobs.has(id),
        known: (id) => this.jobs.has(id) || data.headers.has(id),
        start: (job) => this.begin(job, false),
        turn: (run) => this.tell({ type: 'schedule_turn', run }),
      },
      ports.settings.schedule_catchup_ms ?? 0,
    );
  }

  /**
   * Resumes the jobs in flight and the nodes that were up when the server stopped, just before the transport starts
   * reading. Those nodes' silence clocks start late (one offline window, and more for a large fleet): their clients
   * must notice the restart and reconnect first.
   */
  resume(inFlight: readonly JobState[]): void {
    upFromJobs(this.data.records, inFlight, this.ports.now());
    const up = [...this.data.records].filter(([, r]) => r.status === 'up').map(([node]) => node);
    const grace = restoredNodeGrace(this.ports.settings, up.length);
    for (const node of up) this.follow(node, grace);
    // Nodes connected to other processes keep their connections: those gateways say so, and they are not watched.
    this.ports.cluster.rollCall(this.org);
    for (const job of inFlight) this.begin(job, true);
    this.schedules.resume();
  }

  /**
   * The follower of a node, made on its first authenticated message here (never for unverified input): the node was
   * just heard at this gateway, where it was not followed before.
   */
  nodeFollower(node: string): NodeFollower {
    const live = this.nodes.get(node);
    if (live) return live;
    const follower = this.follow(node, 0);
    this.reached(node);
    return follower;
  }

  /** A node followed here, its silence counted from `graceMs` from now (or its follower already). */
  private follow(node: string, graceMs: number): NodeFollower {
    const live = this.nodes.get(node);
    if (live) return live;
    const saved = this.data.records.get(node);
    const config = this.ports.settings;
    const at = this.ports.now() + graceMs;
    const initial = newNode(
      saved ? { node_name: node, config, at, saved: nodeRecordOf(node, saved) } : { node_name: node, config, at },
    );
    const follower = new NodeFollower(initial, this.org, this.ports, {
      availability: (n, change) => this.tell({ type: 'node_availability', node: n, change }),
      runs: (id) => this.jobs.has(id),
      answer: (n, _at, message) => {
        const job = message.job_id === null ? undefined : this.jobs.get(message.job_id);
        if (job) dispatch(job.ref, { type: 'answer', node: n, message });
      },
      send: (n, message, voteBy) => this.ports.transport.send(this.org, n, message, voteBy),
    });
    this.nodes.set(node, follower);
    return follower;
  }

  /**
   * The node was just heard at a gateway it was not heard at before (this process, or another's 'attached'): a job
   * still waiting for its vote asks it again there, as a commit sent before may have gone to channels it left.
   */
  reached(node: string): void {
    for (const job of this.jobs.values()) dispatch(job.ref, { type: 'node_reached', node });
  }

  unfollow(node: string): void {
    this.nodes.delete(node);
  }

  job(id: string): Ref<JobMsg> | undefined {
    return this.jobs.get(id)?.ref;
  }

  /**
   * Ticks drive the write-behind of node states and retention, once an interval; sweeps, node silence and rehab
   * resends, `sweeps` times an interval.
   */
  startTicks(sweeps: number): void {
    const { timers, settings } = this.ports;
    const interval = settings.heartbeat_interval;
    this.ticks.push(
      timers.every(interval, () => dispatch(this.self(), { type: 'push_tick' }), { unref: true }),
      timers.every(interval / sweeps, () => this.sweep(), { unref: true }),
    );
  }

  stopTicks(): void {
    for (const stop of this.ticks.splice(0)) stop();
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

  report(msg: PushReport): void {
    switch (msg.type) {
      case 'job_saved':
        this.data.headers.set(msg.header.id, msg.header);
        break;
      case 'job_finished':
        this.finished.remember(msg.id, msg.final);
        this.ports.timers.after(JOB_LINGER_MS, () => this.tell({ type: 'job_retired', id: msg.id }), { unref: true });
        break;
      case 'job_retired':
        this.retire(msg.id);
        break;
      case 'node_availability':
        this.changed(msg.node, msg.change);
        break;
      case 'gateway_events':
        // Released meanwhile: nothing of it can be stored here, and the entry waits for the new owner.
        msg.stored(
          this.released ? Promise.reject(new Error('released')) : applyGatewayEvents(this, msg.gateway, msg.events),
        );
        break;
      case 'gateways_gone':
        this.watchNodesOf(msg.gateways);
        break;
      case 'schedule_turn':
        msg.run();
        break;
      case 'push_tick':
        this.flush().catch(() => undefined); // logged; the states are written again at the next tick
        this.retention.tick(this.ports.now());
        break;
    }
  }

  /** A request its organization handed on: a new job's actor is spawned, the rest answered from what is here. */
  request(request: PushRequest, requesterKey: string, replyTo: Ref<Reply>): void {
    if (isScheduleRequest(request)) {
      this.schedules.request(request, replyTo);
      return;
    }
    if (request.type !== 'start_job') {
      answerPush(this.answerSources, request, requesterKey, replyTo);
      return;
    }
    this.begin(request.job, false, { replyTo, reply: request.reply });
  }

  /** A job's actor starts it (`restored`: resumes it), on its nodes available now; `answer` leaves once it is stored. */
  private begin(job: JobState, restored: boolean, answer?: { replyTo: Ref<Reply>; reply: Reply }): void {
    const available = this.availableOf(Object.keys(job.nodes));
    dispatch(this.spawnJobActor(job), {
      type: 'begin',
      available,
      restored,
      ...(answer === undefined ? {} : { answer }),
    });
  }

  /** Forgotten first, then stopped by a message: requests already handed to it are answered before. */
  private retire(id: string): void {
    // Its saves go on until its final record is stored (the store may be away), and are waited for by a release.
    const job = this.jobs.get(id);
    this.jobs.delete(id);
    if (job) {
      dispatch(job.ref, { type: 'stop' });
      this.retired.add(job);
      const forget = () => this.retired.delete(job);
      job.stored().then(forget, forget);
    }
    this.ports.cluster.jobOver(this.org, id);
  }

  /** `gateway`: the member whose gateway reported the change; undefined for this owner's own follower. */
  changed(node: string, change: AvailabilityChange, gateway?: string): void {
    const { status, updated_at, incarnation, available } = change;
    const record = { node_name: node, status, updated_at, incarnation, available };
    this.data.records.set(node, gateway === undefined ? record : { ...record, gateway });
    this.writes.changed(node);
    if (status === 'down') this.ports.transport.nodeDown(this.org, node);
    if (!available) for (const job of this.jobs.values()) dispatch(job.ref, { type: 'node_down', node });
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

  /** Writes the node states changed so far (see NodeStateWrites.flush). */
  flush(): Promise<void> {
    return this.writes.flush();
  }

  /** Resolves once the node states and every job's changes are stored: a stopping server waits for it. */
  async whenSaved(): Promise<void> {
    await Promise.all([
      this.writes.settled(),
      this.retention.underWay,
      ...[...this.jobs.values(), ...this.retired].map((job) => job.saved()),
    ]);
  }

  /**
   * The organization is to be served by another process, which restores it from the store: every job handles what
   * it was told before (a new one is stored and answered first) and stops, then everything is stored. Nothing
   * reaches the supervisor from its children or timers afterwards: an organization adopted again here has a
   * supervisor of the same name.
   */
  async release(): Promise<void> {
    this.released = true;
    this.stopTicks();
    this.schedules.stop();
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
    await Promise.all([this.writes.settled(), this.retention.underWay, ...all.map((job) => job.saved())]);
  }

  /**
   * The store lost what it held: node states, every job's header, the finished jobs still in memory (their
   * nodes' statuses and times; exit statuses and captured output of those are gone), and live jobs whole.
   */
  async writeBack(): Promise<void> {
    const { store } = this.ports;
    await this.writes.writeAll();
    await store.putMany(jobsCollection(this.org), [...this.data.headers]);
    await store.putMany(schedulesCollection(this.org), [...this.data.schedules]);
    for (const [id, fields] of this.finished.storedFields())
      await store.putFields(jobsCollection(this.org), id, fields);
    for (const job of this.jobs.values()) dispatch(job.ref, { type: 'write_back' });
  }

  /** The organization is gone: nothing of it is written any more, and a job being stored never starts. */
  async drop(): Promise<void> {
    this.deleted = true;
    this.schedules.stop();
    await this.writes.drop();
  }

  private tell(msg: PushReport): void {
    if (!this.released) dispatch(this.self(), msg);
  }

  private jobsParent(): Ref<never> {
    this.jobsRef ??= spawnSupervised<null, never>(
      this.self(),
      { name: 'jobs', initial: null, receive: () => null, onCrash: () => null },
      this.ports.reporter,
    );
    return this.jobsRef;
  }

  /** The nodes that are available now: one lookup per node, not a pass over the fleet. */
  private availableOf(nodes: Iterable<string>): Set<string> {
    const available = new Set<string>();
    for (const node of nodes) if (this.data.records.get(node)?.available === true) available.add(node);
    return available;
  }

  private spawnJobActor(job: JobState): Ref<JobMsg> {
    const handle = spawnJob(this.jobsParent(), this.org, job, this.ports, {
      saved: (header) => this.tell({ type: 'job_saved', header }),
      finished: (id, final) => this.tell({ type: 'job_finished', id, final }),
      refused: (id) => this.tell({ type: 'job_retired', id }),
      deleted: () => this.deleted,
      available: (nodes) => this.availableOf(nodes),
    });
    this.jobs.set(job.id, handle);
    return handle.ref;
  }
}
