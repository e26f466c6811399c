// One node follower per node with a live client: it follows the node's heartbeats through the pure node machine
// (spec 3.3) and passes the node's job answers on to their job actors. A heartbeat ends here. The transport also
// tells it what it wrote to the node, so that its machine knows which commits await the node's vote, and writes again
// (or takes a heartbeat as the ack of) one lost on the way.
//
// Node followers run on a synchronous mailbox. Their machine is pure and never waits, so a message is handled to
// its end the moment it is told, in the order told, as a mailbox would: without nact's scheduling of each
// message (an immediate, a context, promises), which costs more than the rest of a heartbeat's handling. They
// live in their organization's push supervisor (push-runtime.ts); what they send goes to nact actors.
import type { ClientJobState } from '../../src/protocol/messages.js';
import type { WriteFact } from './awaited-commits.js';
import {
  isAvailable,
  restarted,
  stepNode,
  tickDue,
  type JobHeld,
  type NodeEffect,
  type NodeEvent,
  type NodeState,
} from './node-machine.js';
import { Interpreter } from '../shared/interpreter.js';
import { NO_LAG, type NodeAnswerMessage, type OutboundMessage, type PushPorts, type ServerLag } from './ports.js';

/** `sequence`: the message's place in what its client sent (see NodeEvent). */
export type NodeMsg =
  /** `job`, `job_state`: the job the client says it holds (reference 2.7), or null when idle, and how far it got. */
  | {
      type: 'heartbeat';
      at: number;
      incarnation: string;
      job: string | null;
      job_state: ClientJobState;
      sequence: number;
    }
  /** `lag`: how far behind the server reads heartbeats now (ms), which lengthens the offline window. */
  | { type: 'tick'; at: number; lag: ServerLag }
  | { type: 'answer'; at: number; message: NodeAnswerMessage; sequence: number }
  /** What the transport did with a message for the node, or an answer it passed to the owner another way. */
  | WriteFact;

export interface AvailabilityChange {
  status: 'up' | 'down';
  available: boolean;
  updated_at: number;
  incarnation: string | null;
  /** The client restarted: jobs must see the node as gone even if it stays up. */
  restarted: boolean;
}

/**
 * Where a node follower reports: its organization's push runtime when this process owns the organization, else the
 * gateway's link to the owner (gateway-nodes.ts).
 */
/** A message the follower writes to its node, as it hands it to the transport. */
export interface NodeWrite {
  message: OutboundMessage;
  voteBy?: number;
}

export interface NodeParent {
  availability(node: string, change: AvailabilityChange): void;
  /** Whether the job a node names runs (a node that holds a job that does not is reset). */
  runs(job: string): boolean;
  /** An answer about a job that runs, for that job. */
  answer(node: string, at: number, message: NodeAnswerMessage): void;
  /**
   * Writes to the node (its rehab abort, a result's ack, a commit written again with its `voteBy`) when the follower
   * acts on its own (a sweep's tick); told by the transport, it hands the transport its writes instead. An owner's
   * runtime sends through the transport, which writes nothing while the organization's lease is in doubt; a gateway
   * writes to the node's connection here, on its owner's word.
   */
  send(node: string, message: OutboundMessage, voteBy?: number): void;
}

type AnswerMsg = Extract<NodeMsg, { type: 'answer' }>;

export class NodeFollower {
  private readonly machine: Interpreter<NodeState, NodeEvent, NodeEffect, AnswerMsg>;
  private readonly name: string;
  /** Where writes go while the transport tells it something (see tell). */
  private writes: NodeWrite[] | undefined;
  /** When this process last heard the node's heartbeat (the dashboard shows it); undefined until then. */
  lastHeartbeatAt: number | undefined;

  constructor(
    initial: NodeState,
    private readonly org: string,
    private readonly ports: PushPorts,
    private readonly parent: NodeParent,
  ) {
    this.machine = new Interpreter(stepNode, initial, (state, effects, answer) => this.run(state, effects, answer));
    this.name = initial.node_name;
  }

  /**
   * Goes on from `state`, told nothing of the change: its parent gave it (see GatewayNodes.reset). The commits the
   * node was written are still awaited.
   */
  restart(state: NodeState): void {
    this.machine.reset(restarted(this.machine.state, state));
  }

  /** Whether a tick now would do anything: the runtime's sweeps tell only these nodes. */
  tickDue(at: number, lag: ServerLag): boolean {
    return tickDue(this.machine.state, at, lag);
  }

  /**
   * Handles one message to its end. Its crash policy: a throw leaves the state as it was before the message.
   * `writes`: where what it writes to the node goes when the transport tells it, which writes them once this
   * returns (so the transport is never called back by what it called); else through its parent.
   */
  tell(msg: NodeMsg, writes?: NodeWrite[]): void {
    const before = this.writes;
    this.writes = writes;
    try {
      this.receive(msg);
    } catch (error) {
      // Steps are pure and visible changes come in fresh state objects, so the state before the throw is whole:
      // the node goes on from it, and its next heartbeat is followed as usual.
      this.ports.reporter.crashed(`node-${this.name}`, error, false);
    } finally {
      this.writes = before;
    }
  }

  private write(message: OutboundMessage, voteBy?: number): void {
    if (this.writes) this.writes.push(voteBy === undefined ? { message } : { message, voteBy });
    else this.parent.send(this.name, message, voteBy);
  }

  private held(id: string | null): JobHeld {
    return id === null ? 'none' : this.parent.runs(id) ? 'known' : 'unknown';
  }

  /** The machine's event for a message, with what the node's message says made relative to this process. */
  private receive(msg: NodeMsg): void {
    const { machine } = this;
    switch (msg.type) {
      case 'tick':
      case 'written':
      case 'unroutable':
      case 'answer_relayed':
        machine.send(msg);
        return;
      case 'heartbeat':
        this.lastHeartbeatAt = msg.at;
        machine.send({
          type: 'heartbeat',
          at: msg.at,
          incarnation: msg.incarnation,
          job: this.held(msg.job),
          job_id: msg.job,
          job_state: msg.job_state,
          sequence: msg.sequence,
          // Only a down node's streak reads the lag: an up node's heartbeat, the hot path, does not ask for it.
          lag: machine.state.status === 'down' ? this.ports.lag.lag(msg.at) : NO_LAG,
        });
        return;
      case 'answer':
        machine.send(
          {
            type: 'answer',
            at: msg.at,
            answer: msg.message.type,
            job_id: msg.message.job_id,
            job: this.held(msg.message.job_id),
            sequence: msg.sequence,
          },
          msg,
        );
    }
  }

  /** What the node's state says of its availability now, as its parent is told of a change. */
  availability(): AvailabilityChange {
    const state = this.machine.state;
    const { status, updated_at, incarnation } = state;
    return { status, available: isAvailable(state), updated_at, incarnation, restarted: false };
  }

  private run(state: NodeState, effects: readonly NodeEffect[], answer: AnswerMsg | undefined): void {
    const { name, org, parent, ports } = this;
    for (const e of effects) {
      switch (e.type) {
        case 'availability_changed':
          if (e.status === 'down') ports.lag.downMarked(org, name);
          parent.availability(name, {
            status: e.status,
            available: e.available,
            updated_at: e.updated_at,
            incarnation: state.incarnation,
            restarted: false,
          });
          break;
        case 'incarnation_changed':
          parent.availability(name, {
            status: state.status,
            available: false,
            updated_at: state.updated_at,
            incarnation: e.to,
            restarted: true,
          });
          break;
        case 'send':
          this.write({ type: 'abort', job_id: null });
          break;
        case 'down_deferred':
          ports.lag.downDeferred(org, name);
          break;
        case 'forward':
          if (answer && answer.message.job_id !== null) parent.answer(name, answer.at, answer.message);
          break;
        case 'ack_result':
          if (answer && answer.message.job_id !== null)
            this.write({ type: 'ack_result', job_id: answer.message.job_id });
          break;
        case 'ignored':
          ports.counters.inc('node_ignored', e.reason);
          ports.log.debug('node event ignored', { org, node: name, reason: e.reason });
          break;
        case 'resend_commit':
          ports.votes.recovered('commit_resent');
          this.write(e.message, e.voteBy);
          break;
        case 'ack_from_heartbeat':
          ports.votes.recovered('ack_from_heartbeat');
          if (e.forward) parent.answer(name, e.at, { type: 'ack_commit', job_id: e.job_id });
          break;
      }
    }
  }
}

/**
 * Ticks the nodes that have something due at `at`: silence past the offline threshold (and the server's `lag`), or
 * a rehab abort to resend. A node with nothing due costs a read of a few fields, not a step of its machine, and all
 * share one tick message.
 */
export function sweepNodes(actors: Iterable<NodeFollower>, at: number, lag: ServerLag): void {
  let tick: NodeMsg | undefined;
  for (const actor of actors) if (actor.tickDue(at, lag)) actor.tell((tick ??= { type: 'tick', at, lag }));
}
