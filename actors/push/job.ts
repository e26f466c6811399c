// One job actor per job in flight: it feeds events to the pure job machine and runs the effects in order. A
// state change is saved before any message, timer or answer makes it visible (spec 3; reference 5): the job's
// saver coalesces the saves of many steps and holds those effects back until their write is done. Once the job
// is over its parent stops it, and the stored record answers for the job from then on.
import { dispatch, stop, type Ref } from 'nact';
import { fail, storeFailure, type Reply } from '../shared/reply.js';
import { Interpreter } from '../shared/interpreter.js';
import { spawnSupervised } from '../shared/supervision.js';
import { answerAbout } from './job-answers.js';
import { JobEffects, type AnswerCause } from './job-effects.js';
import { stepJob } from './job-machine.js';
import type { JobEffect, JobEvent, JobState } from './job-model.js';
import { JobRendering } from './job-rendering.js';
import { JobSaver } from './job-saver.js';
import type { JobMsg, JobParent } from './job-messages.js';
import { saveOf, writeJob } from './job-store.js';
import type { OutboundMessage, PushPorts } from './ports.js';

const SAVE_RETRY_MS = 500;
/** A job whose saves keep failing says so once in this long. */
const SAVE_FAILURE_LOG_EVERY_MS = 30_000;

/** A job's actor, and a way to wait until everything it changed is stored. */
export interface JobHandle {
  ref: Ref<JobMsg>;
  saved(): Promise<void>;
  /** Resolves once everything the job changed is stored; rejects once its saves were given up (letGo). */
  stored(): Promise<void>;
  /**
   * Its organization is let go here: a save refused for want of the lease from now on is given up rather than
   * tried again. Its actor may have stopped already (a finished job whose last saves wait for the store).
   */
  letGo(): void;
  /**
   * The answer to GET: the job as stored, read between the actor's turns without a message, so a request is not
   * queued behind the answers of thousands of nodes. While the store refuses writes, the job as it is in memory.
   */
  shown(): Reply;
}

export function spawnJob(
  parent: Ref<unknown>,
  org: string,
  initial: JobState,
  ports: PushPorts,
  owner: JobParent,
): JobHandle {
  // The machine steps the state in place, so this one object is the job's state for the actor's whole life.
  const actor: JobActor = new JobActor(org, initial, ports, owner, () => self);
  const self = spawnSupervised<JobState, JobMsg>(
    parent,
    {
      name: `job-${initial.id}`,
      initial,
      receive: (state, msg, me) => actor.receive(state, msg, me),
      onCrash: (state, msg) => actor.onCrash(state, msg),
    },
    ports.reporter,
  );
  const { saver, rendering } = actor;
  return {
    ref: self,
    saved: () => saver.saved(),
    stored: () => saver.durable(),
    letGo: () => saver.stop(),
    shown: () => rendering.shown(),
  };
}

/** One job's actor: the machine's interpreter, what it saves and how it shows, and how each message steps it. */
class JobActor {
  readonly saver: JobSaver;
  readonly rendering: JobRendering;
  private readonly machine: Interpreter<JobState, JobEvent, JobEffect, AnswerCause>;
  /** One message for every node's ack: the acks a write releases go to a gateway as one order naming their nodes. */
  private readonly ack: OutboundMessage;

  constructor(
    private readonly org: string,
    initial: JobState,
    private readonly ports: PushPorts,
    private readonly owner: JobParent,
    self: () => Ref<JobMsg>,
  ) {
    // A save refused is tried twice a second, for as long as Redis is away or the lease in doubt: said once in a while.
    let failureLoggedAt = -Infinity;
    this.saver = new JobSaver(() => initial, {
      write: (save) => writeJob(ports.store, org, initial.id, save),
      failed: (error) => {
        const at = ports.now();
        if (at - failureLoggedAt < SAVE_FAILURE_LOG_EVERY_MS) return;
        failureLoggedAt = at;
        ports.log.error('saving a job failed; retrying', { org, job: initial.id, error });
      },
      retryMs: SAVE_RETRY_MS,
    });
    this.rendering = new JobRendering(initial, this.saver, ports.now);
    const effects = new JobEffects(org, ports, this.saver, this.rendering, owner, self);
    this.machine = new Interpreter(stepJob, initial, (state, fx, cause) => effects.run(state, fx, cause));
    this.ack = { type: 'ack_result', job_id: initial.id };
  }

  /**
   * An answer shows the state as it is now, so it leaves once that state is stored; while the store is down it
   * leaves at once, from memory, rather than wait for the store to return.
   */
  private answer(replyTo: Ref<Reply>, reply: Reply): void {
    this.saver.answerAfterSaved(() => dispatch(replyTo, reply));
  }

  /**
   * A new job is stored whole before it starts, in its own turn: the messages told it meanwhile wait, and nothing of
   * it is visible (its row, its feed, its commits) before the store holds it.
   */
  private async create(state: JobState, msg: Extract<JobMsg, { type: 'begin' }>, me: Ref<JobMsg>): Promise<JobState> {
    const refuse = (reply: Reply) => {
      if (msg.answer) dispatch(msg.answer.replyTo, reply);
      this.owner.refused(state.id);
      stop(me);
      return state;
    };
    try {
      await writeJob(this.ports.store, this.org, state.id, saveOf(state));
    } catch (e) {
      return refuse(storeFailure(this.ports.log, e));
    }
    if (this.owner.deleted()) return refuse(fail(404, `organization '${this.org}' does not exist.`));
    return this.begin(state, msg);
  }

  private begin(state: JobState, msg: Extract<JobMsg, { type: 'begin' }>): JobState {
    this.ports.feeds.jobStarted(this.org, state.id);
    this.machine.send({ type: msg.restored ? 'restored' : 'start', at: this.ports.now(), available: msg.available });
    if (msg.answer) this.answer(msg.answer.replyTo, msg.answer.reply);
    return state;
  }

  receive(state: JobState, msg: JobMsg, me: Ref<JobMsg>): JobState | Promise<JobState> {
    const { machine } = this;
    const at = this.ports.now();
    switch (msg.type) {
      case 'begin':
        return msg.restored ? this.begin(state, msg) : this.create(state, msg, me);
      case 'answer':
        this.answered(msg, at);
        break;
      case 'node_down':
        machine.send({ type: 'node_down', at, node: msg.node });
        break;
      case 'node_reached':
        machine.send({ type: 'node_reached', at, node: msg.node });
        break;
      case 'timer':
        if (msg.timer === 'wave')
          machine.send({ type: 'next_wave', at, due: msg.at, available: this.waitingAvailable(state) });
        else machine.send({ type: msg.timer === 'voting' ? 'voting_timeout' : 'run_timeout', at: msg.at });
        break;
      case 'abort': {
        const rejected = machine.send({ type: 'abort', at }).some((e) => e.type === 'rejected');
        this.answer(msg.replyTo, answerAbout(state, 'abort', rejected, this.rendering.body()));
        break;
      }
      case 'stop':
        stop(me);
        if (msg.replyTo) dispatch(msg.replyTo, true);
        break;
      case 'write_back':
        this.saver.changed(true, Object.keys(state.nodes));
        break;
    }
    return state;
  }

  /** A rollout's nodes still waiting for their wave that are available now. */
  private waitingAvailable(state: JobState): ReadonlySet<string> {
    const waiting: string[] = [];
    for (const node in state.nodes) if (state.nodes[node] === 'waiting') waiting.push(node);
    return this.owner.available(waiting);
  }

  private answered(msg: Extract<JobMsg, { type: 'answer' }>, at: number): void {
    const m = msg.message;
    const event: JobEvent = { type: m.type, at, node: msg.node };
    if (typeof m.exit_status === 'number') event.exit_status = m.exit_status;
    if (m.stdout !== undefined || m.stderr !== undefined) event.output = true;
    this.machine.send(event, { ...m, node: msg.node });
    // A result is acknowledged once every change stepped so far is stored, so never before itself: its client stops
    // sending it then. A duplicate, or one the job does not take, is acknowledged too: the job is done with it. A job
    // whose lease is taken meanwhile sends nothing more, and the client sends it again to the next owner.
    if (m.type === 'succeeded' || m.type === 'failed')
      this.saver.afterSaved(() => this.ports.transport.send(this.org, msg.node, this.ack));
    msg.stored?.(this.saver.durable());
  }

  /**
   * The state may be half-stepped: the machine's crash event trusts none of it. The job is saved `crashed`, its
   * nodes are told to drop it, and whoever asked is answered from the crashed job.
   */
  onCrash(state: JobState, msg: JobMsg): JobState {
    this.rendering.changed();
    this.machine.send({ type: 'crash', at: this.ports.now() });
    if (msg.type === 'abort') this.answer(msg.replyTo, answerAbout(state, 'abort', true));
    if (msg.type === 'begin' && msg.answer) this.answer(msg.answer.replyTo, msg.answer.reply);
    if (msg.type === 'answer') msg.stored?.(this.saver.durable());
    return state;
  }
}
