// The node followers of a gateway: nodes connected to this process whose organization another process owns. They run
// the same node machine as an owner's, on the same heartbeats, and report to the owner what it must know (up and
// down, answers to jobs) through the partition's inbox; heartbeats themselves never leave the gateway.
//
// Whether a job a node names still runs is the owner's to say. A job this gateway was sent messages for runs
// until the owner says it is over; one it never heard of is asked about once, and counts as running meanwhile,
// since resetting a node that runs a command would abort that command.
import { NODE_STATES_MAP, nodeStatesCollection } from '../../src/store/collections.js';
import type { GatewayReport } from '../../src/cluster/node-link-messages.js';
import { newNode, nodeRecordSchema, type NodeRecord } from './node-machine.js';
import { NodeFollower, sweepNodes, type AvailabilityChange } from './node.js';
import type { NodeAnswerMessage, OutboundMessage, PushPorts } from './ports.js';
import { SWEEPS_PER_INTERVAL } from './push-supervisor.js';

/**
 * Job ids a gateway remembers per organization and kind at most: the latest ones matter (a node names the job it
 * runs now), and an organization with many jobs must not grow these sets for ever.
 */
const JOBS_KEPT = 10_000;

interface GatewayOrg {
  /** The nodes' saved records, read once the organization's first node spoke here. */
  records: Map<string, NodeRecord> | undefined;
  loading: Promise<void> | undefined;
  nodes: Map<string, NodeFollower>;
  /** Jobs this gateway was sent messages for: they run until the owner says otherwise. */
  sent: Set<string>;
  /** Jobs the owner says do not run. */
  over: Set<string>;
  /** Jobs asked about, so each is asked once. */
  asked: Set<string>;
}

export class GatewayNodes {
  private readonly orgs = new Map<string, GatewayOrg>();
  /** Stops the sweeps' timer. */
  private readonly stopSweeps: () => void;

  constructor(
    private readonly ports: PushPorts,
    /** Hands an event to the organization's owner. */
    private readonly report: (event: GatewayReport) => void,
    /** Writes to a node connected here (not through the owner's transport: this process does not own it). */
    private readonly sendHere: (org: string, node: string, message: OutboundMessage, voteBy?: number) => void,
  ) {
    const { heartbeat_interval } = ports.settings;
    this.stopSweeps = ports.timers.every(heartbeat_interval / SWEEPS_PER_INTERVAL, () => this.sweep(), {
      unref: true,
    });
  }

  /**
   * The actor of a node of an organization served elsewhere, spawned on its first verified message; undefined while
   * the organization's node records are being read (the node's next message finds it).
   */
  nodeFollower(org: string, node: string): NodeFollower | undefined {
    const o = this.orgOf(org);
    const live = o.nodes.get(node);
    if (live) return live;
    if (!o.records) {
      void this.load(org);
      return undefined;
    }
    const saved = o.records.get(node);
    const config = this.ports.settings;
    const at = this.ports.now();
    const actor = new NodeFollower(
      newNode(saved ? { node_name: node, config, at, saved } : { node_name: node, config, at }),
      org,
      this.ports,
      {
        availability: (n, change) => this.changed(org, n, change),
        runs: (job) => this.runs(org, node, job),
        answer: (n, at2, message) => this.report({ t: 'answer', org, node: n, at: at2, message }),
        send: (n, message, voteBy) => this.sendHere(org, n, message, voteBy),
      },
    );
    o.nodes.set(node, actor);
    this.report({ t: 'attached', org, node, change: actor.availability() });
    return actor;
  }

  /** A node's answer this process read as the organization's owner, its lease in doubt: for the owner, as ours. */
  relay(org: string, node: string, at: number, message: NodeAnswerMessage): void {
    this.report({ t: 'answer', org, node, at, message });
  }

  /** The read of the organization's node records under way, if any (a node's message waits for it). */
  loading(org: string): Promise<void> | undefined {
    const o = this.orgs.get(org);
    return o && !o.records ? o.loading : undefined;
  }

  /** Reads the organization's node records, once. */
  load(org: string): Promise<void> {
    const o = this.orgOf(org);
    o.loading ??= this.ports.store.getFields(nodeStatesCollection(org), NODE_STATES_MAP).then(
      (saved) => {
        const records = new Map<string, NodeRecord>();
        for (const [node, raw] of saved) {
          const parsed = nodeRecordSchema.safeParse(raw);
          if (parsed.success) records.set(node, parsed.data);
        }
        o.records = records;
      },
      (error: unknown) => {
        o.loading = undefined;
        this.ports.log.warn('reading node states for a gateway failed; read again on the next message', {
          org,
          error,
        });
      },
    );
    return o.loading;
  }

  /** A job message for a node here: its job runs. */
  sent(org: string, job: string | null): void {
    if (job !== null) keep(this.orgOf(org).sent, job);
  }

  /** The owner says these jobs do not run (any more): a node still holding one is reset on its next heartbeat. */
  over(org: string, jobs: readonly string[]): void {
    const o = this.orgOf(org);
    for (const job of jobs) {
      o.sent.delete(job);
      keep(o.over, job);
    }
  }

  /** The organization has a new owner: every node of it connected here says where it is and how it is. */
  rollCall(org: string): void {
    for (const [node, actor] of this.orgs.get(org)?.nodes ?? [])
      this.report({ t: 'attached', org, node, change: actor.availability() });
  }

  /**
   * The owner's record of the node: the actor, made from an older stored one, starts again from it (its silence
   * clock from now), and the owner is not told (it knows).
   */
  reset(org: string, node: string, record: NodeRecord): void {
    const o = this.orgs.get(org);
    const actor = o?.nodes.get(node);
    if (!o || !actor) return;
    o.records?.set(node, record);
    const config = this.ports.settings;
    actor.restart(newNode({ node_name: node, config, at: this.ports.now(), saved: record }));
  }

  /** The node's gateway is another member now: what this one holds of it goes, unreported. */
  forgetNode(org: string, node: string): void {
    this.orgs.get(org)?.nodes.delete(node);
  }

  /** Every node connected here says where it is and how it is, to its organization's owner. */
  rollCallAll(): void {
    for (const org of this.orgs.keys()) this.rollCall(org);
  }

  /** The organization is served here from now on (its owner's actors take its nodes), or was deleted. */
  forgetOrg(org: string): void {
    this.orgs.delete(org);
  }

  close(): void {
    this.stopSweeps();
  }

  private runs(org: string, node: string, job: string): boolean {
    const o = this.orgOf(org);
    if (o.over.has(job)) return false;
    if (!o.sent.has(job) && !o.asked.has(job)) {
      keep(o.asked, job);
      this.report({ t: 'holds', org, node, job });
    }
    return true;
  }

  private changed(org: string, node: string, change: AvailabilityChange): void {
    if (change.status === 'down') this.ports.transport.nodeDown(org, node);
    this.report({ t: 'availability', org, node, change });
  }

  private sweep(): void {
    const at = this.ports.now();
    const lag = this.ports.lag.lag(at);
    for (const o of this.orgs.values()) sweepNodes(o.nodes.values(), at, lag);
  }

  private orgOf(org: string): GatewayOrg {
    let o = this.orgs.get(org);
    if (!o) {
      o = {
        records: undefined,
        loading: undefined,
        nodes: new Map(),
        sent: new Set(),
        over: new Set(),
        asked: new Set(),
      };
      this.orgs.set(org, o);
    }
    return o;
  }
}

/** Adds `job`, letting the oldest go past JOBS_KEPT (a Set iterates in insertion order). */
function keep(jobs: Set<string>, job: string): void {
  jobs.add(job);
  if (jobs.size > JOBS_KEPT) for (const oldest of jobs) return void jobs.delete(oldest);
}
