// The organization's push-jobs children: spawning job and node actors, routing their reports, writing
// node states behind in batches, and carrying out what `handlePushOp` decided.
import { dispatch, type Ref } from 'nact';
import { envelopeFor } from '../src/protocol/messages.js';
import { encryptSessionKey } from '../src/protocol/signing.js';
import { jobStateSchema, type JobState } from './job-model.js';
import { jobsCollection, outputsCollection, spawnJob, summaryOf, type JobMsg, type JobSummary } from './job.js';
import { newNode } from './node-machine.js';
import { spawnNode, type NodeMsg, type NodeParent } from './node.js';
import type { PushOutcome } from './org-push.js';
import { nodeStatesCollection, parseDoc, type OrgState } from './org-state.js';
import type { PushPorts } from './push-ports.js';
import { fail, ok, type Reply, type RequestContext } from './reply.js';

/** Messages the organization actor takes from its push-jobs children and timers. */
export type PushReport =
  | { type: 'node_availability'; node: string; change: Parameters<NodeParent['availability']>[1] }
  | { type: 'job_summary'; summary: JobSummary }
  | { type: 'push_tick' };

export class OrgPush {
  constructor(
    private readonly org: string,
    private readonly state: OrgState,
    private readonly ports: PushPorts,
    private readonly self: () => Ref<PushReport>,
  ) {}

  private get push() {
    return this.state.push;
  }

  /**
   * Resumes the jobs in flight and the nodes that were up when the server stopped. Those nodes' silence clocks
   * start one offline window late: the transport starts reading only after every organization is restored,
   * and their clients must reconnect first, so a server slow to start must not write them all off.
   */
  resume(): void {
    const { heartbeat_interval, offline_threshold } = this.ports.settings;
    const grace = heartbeat_interval * offline_threshold;
    for (const [node, r] of this.push.records) if (r.status === 'up') this.nodeActor(node, grace);
    const available = this.availableNodes();
    for (const job of this.push.restored) dispatch(this.spawnJobActor(job), { type: 'begin', available, restored: true });
    this.push.restored = [];
  }

  /** The actor of a node, spawned on its first authenticated message (never for unverified input). */
  nodeActor(node: string, graceMs = 0): Ref<NodeMsg> {
    let ref = this.push.nodes.get(node);
    if (ref) return ref;
    const saved = this.push.records.get(node);
    const at = this.ports.now() + graceMs;
    const initial = saved
      ? newNode({ node_name: node, config: this.ports.settings, at, saved: { node_name: node, status: saved.status, updated_at: saved.updated_at, incarnation: saved.incarnation } })
      : newNode({ node_name: node, config: this.ports.settings, at });
    ref = spawnNode(this.self(), this.org, initial, this.ports, {
      availability: (n, change) => dispatch(this.self(), { type: 'node_availability', node: n, change }),
      job: (id) => this.push.jobs.get(id),
    });
    this.push.nodes.set(node, ref);
    return ref;
  }

  report(msg: PushReport): void {
    switch (msg.type) {
      case 'job_summary':
        this.push.summaries.set(msg.summary.id, msg.summary);
        break;
      case 'node_availability': {
        const { change } = msg;
        this.push.records.set(msg.node, { node_name: msg.node, status: change.status, updated_at: change.updated_at, incarnation: change.incarnation, available: change.available });
        this.push.dirty.add(msg.node);
        if (!change.available) for (const job of this.push.jobs.values()) dispatch(job, { type: 'node_down', node: msg.node });
        break;
      }
      case 'push_tick': {
        const at = this.ports.now();
        for (const ref of this.push.nodes.values()) dispatch(ref, { type: 'tick', at });
        void this.flush();
        break;
      }
    }
  }

  /** Write-behind of node states: one batch per tick, never one write per heartbeat. */
  async flush(): Promise<void> {
    if (this.push.dirty.size === 0) return;
    const docs = [...this.push.dirty].flatMap((n) => {
      const r = this.push.records.get(n);
      return r ? [[n, { node_name: r.node_name, status: r.status, updated_at: r.updated_at, incarnation: r.incarnation }] as const] : [];
    });
    this.push.dirty.clear();
    try {
      await this.ports.store.putMany(nodeStatesCollection(this.org), docs);
    } catch (e) {
      for (const [n] of docs) this.push.dirty.add(n);
      console.error(`node states of ${this.org}: saving failed, will retry: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private availableNodes(): Set<string> {
    return new Set([...this.push.records].filter(([, r]) => r.available).map(([n]) => n));
  }

  private spawnJobActor(job: JobState): Ref<JobMsg> {
    const ref = spawnJob(this.self(), this.org, job, this.ports, { summary: (summary) => dispatch(this.self(), { type: 'job_summary', summary }) });
    this.push.jobs.set(job.id, ref);
    return ref;
  }

  /** A finished job's actor is spawned again from its snapshot when asked about. */
  private async jobActor(id: string): Promise<Ref<JobMsg> | undefined> {
    const live = this.push.jobs.get(id);
    if (live) return live;
    const raw = await this.ports.store.get(jobsCollection(this.org), id);
    return raw === undefined ? undefined : this.spawnJobActor(parseDoc(jobStateSchema, raw, jobsCollection(this.org), id));
  }

  /** Carries out a push outcome; answers `replyTo` itself, directly or through a job actor. */
  async run(out: PushOutcome, ctx: RequestContext, replyTo: Ref<Reply>): Promise<void> {
    if (out.startJob) {
      const job = out.startJob;
      const tooBig = this.commitTooBig(job);
      if (tooBig !== null) {
        dispatch(replyTo, fail(400, tooBig));
        return;
      }
      await this.ports.store.put(jobsCollection(this.org), job.id, job);
      this.push.summaries.set(job.id, summaryOf(job));
      dispatch(this.spawnJobActor(job), { type: 'begin', available: this.availableNodes(), restored: false });
      dispatch(replyTo, out.reply);
    } else if (out.toJob) {
      const ref = await this.jobActor(out.toJob.id);
      if (ref) dispatch(ref, { type: out.toJob.msg, replyTo });
      else dispatch(replyTo, fail(404, `Cannot find job ${out.toJob.id}`));
    } else if (out.readOutput) {
      const { id, node, channel } = out.readOutput;
      const raw = (await this.ports.store.get(outputsCollection(this.org), `${id}/${node}`)) as { stdout?: string; stderr?: string; truncated?: boolean } | undefined;
      const text = raw?.[channel];
      if (typeof text !== 'string') dispatch(replyTo, fail(404, `No ${channel} captured for node ${node} in job ${id}`));
      else dispatch(replyTo, { status: 200, body: text, raw: true, truncated: raw?.truncated === true });
    } else if (out.openSession !== undefined) {
      dispatch(replyTo, await this.config(out.openSession, ctx));
    } else {
      dispatch(replyTo, out.reply);
    }
  }

  /**
   * A node drops a message past max_body_size (reference 2.3), so a commit that large would leave every node
   * silent until the voting timeout: refuse the job instead. The envelope is sized for the longest node name
   * and the largest sequence.
   */
  private commitTooBig(job: JobState): string | null {
    const d = this.ports.describe();
    const node = Object.keys(job.nodes).reduce((a, b) => (b.length > a.length ? b : a), '');
    const body = {
      type: 'commit', job_id: job.id, command: job.command, run_timeout: job.run_timeout, ...job.options,
      ...envelopeFor(this.org, node, d.incarnation_id, Number.MAX_SAFE_INTEGER, this.ports.now()),
    };
    const bytes = Buffer.byteLength(JSON.stringify(body));
    if (bytes <= d.max_body_size) return null;
    return `Fields 'command', 'env', 'dir', 'user' and 'file' make a commit message of ${bytes} bytes; nodes accept at most ${d.max_body_size}`;
  }

  /** The config endpoint's answer: where to connect, and a session key only the requester can read. */
  private async config(node: string, ctx: RequestContext): Promise<Reply> {
    const grant = await this.ports.openSession(this.org, node);
    const d = this.ports.describe();
    const s = this.ports.settings;
    return ok({
      type: 'config', host: d.server_name, node, organization: this.org,
      push_jobs: {
        heartbeat: { heartbeat_addr: d.heartbeat_addr, command_addr: d.command_addr, interval: s.heartbeat_interval / 1000, offline_threshold: s.offline_threshold, online_threshold: s.online_threshold },
      },
      curve_public_key: d.curve_public_key,
      encoded_session_key: { method: 'hmac_sha256', key: encryptSessionKey(grant.key, ctx.authPublicKey) },
      lifetime: grant.lifetime,
      incarnation_id: d.incarnation_id,
      max_message_skew: d.max_message_skew,
      max_body_size: d.max_body_size,
    });
  }
}
