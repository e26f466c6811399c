// One job actor per job in flight: it feeds events to the pure job machine and runs the effects in order. A
// state change is saved before any message, timer or answer makes it visible (spec 3; reference 5): the job's
// saver coalesces the saves of many steps and holds those effects back until their write is done. Once the job
// is over its parent stops it, and the stored record answers for the job from then on.
import { dispatch, stop, type Ref } from 'nact';
import type { JobBody } from '../../src/api/push-jobs.js';
import { httpDate } from '../../src/lib/dates.js';
import { fail, ok, storeFailure, type Reply } from '../shared/reply.js';
import { Interpreter } from '../shared/interpreter.js';
import { spawnSupervised } from '../shared/supervision.js';
import { jobNodesByStatus, stepJob } from './job-machine.js';
import type { JobEffect, JobEvent, JobState } from './job-model.js';
import { JobSaver } from './job-saver.js';
import { headerOf, saveOf, writeJob, type JobHeader } from './job-store.js';
import type { NodeAnswerMessage, PushPorts } from './ports.js';

export type JobMsg =
  /**
   * The job starts (or resumes after a restart). `answer`, the new job's POST answer, leaves once the first step
   * is stored: a GET sent after it shows which nodes were asked and which were unavailable.
   */
  | { type: 'begin'; available: ReadonlySet<string>; restored: boolean; answer?: { replyTo: Ref<Reply>; reply: Reply } }
  /**
   * `stored`: told, once the answer is handled, a promise of what it changed being stored, which rejects when the
   * store refuses it (another process owns the job now): a gateway's inbox entry is acknowledged only once stored.
   */
  | { type: 'answer'; node: string; message: NodeAnswerMessage; stored?: (saved: Promise<void>) => void }
  | { type: 'node_down'; node: string }
  | { type: 'node_reached'; node: string }
  | { type: 'timer'; timer: 'voting' | 'run'; at: number }
  | { type: 'abort'; replyTo: Ref<Reply> }
  /**
   * From the parent once it has forgotten the job: all sent before is answered, and nothing comes after. `replyTo`
   * hears when that is so (a release waits for it before it waits for the job's saves).
   */
  | { type: 'stop'; replyTo?: Ref<true> }
  /** The store lost what it held: the whole job is saved again. */
  | { type: 'write_back' };

export interface JobParent {
  /** The job's row changed (after the change is saved). */
  saved(header: JobHeader): void;
  /** The job is over (`final`: how it answers from now on): the parent forgets it and stops its actor. */
  finished(id: string, final: JobBody): void;
  /** A new job the store refused, or whose organization was deleted while it was stored: it never started. */
  refused(id: string): void;
  /** Whether the organization was deleted (read once a new job is stored, before it starts). */
  deleted(): boolean;
}

/**
 * How long one rendering of a running job answers GETs while only its nodes moved (0: rendered for each GET
 * that follows a change). Rendering and serializing costs about 0.7 µs a node, so a large job polled in a loop
 * during a burst of writes would be rendered for every GET: from 1,000 nodes a rendering is kept 100 ms, longer
 * past 2,000 nodes (0.05 ms a node: 500 ms at 10,000), never more than a second, so that rendering stays a small
 * share of a core however large the job and however many poll it. A smaller job costs little to render and is
 * shown exactly as stored. A change of the job's status is shown at once.
 */
export function keptRenderingMs(nodes: number): number {
  return nodes < 1000 ? 0 : Math.min(1000, Math.max(100, nodes * 0.05));
}

/** setTimeout takes at most 2^31-1 ms; longer deadlines are reached in several waits. */
const MAX_TIMER_MS = 2_147_483_647;
const SAVE_RETRY_MS = 500;
/** A job whose saves keep failing says so once in this long. */
const SAVE_FAILURE_LOG_EVERY_MS = 30_000;

// Rendered in the actors, as is spawnJob's kept rendering: it reads JobState, which src/http and src/api may not import.
/** GET .../pushy/jobs/ID (spec 2.4). */
export function jobJson(s: JobState, sorted?: readonly string[]): JobBody {
  const body: JobBody = {
    id: s.id,
    command: s.command,
    run_timeout: s.run_timeout,
    status: s.status,
    created_at: httpDate(s.created_at),
    updated_at: httpDate(s.updated_at),
    quorum: s.quorum,
    nodes: jobNodesByStatus(s, sorted),
    capture_output: s.options.capture === true,
    // Without a prototype, so that any node name, `__proto__` too, is an ordinary key.
    node_updated_at: Object.create(null) as Record<string, string>,
  };
  for (const node in s.node_updated_at) body.node_updated_at[node] = httpDate(s.node_updated_at[node] as number);
  if (s.options.env !== undefined) body.env = s.options.env;
  if (s.options.dir !== undefined) body.dir = s.options.dir;
  if (s.options.user !== undefined) body.user = s.options.user;
  return body;
}

/** The answer to a request about a job: `get` shows it; `abort` is refused once the job is over. */
export function answerAbout(s: JobState, request: 'get' | 'abort', rejected: boolean, body = jobJson(s)): Reply {
  return rejected && request === 'abort' ? cannotAbort(s) : ok(body);
}

/** A job as it ended, and its answer to GET once asked for: serialized once, however often it is read. */
export interface FinishedJob {
  body: JobBody;
  shown?: Reply;
}

/** The answer about a finished job, from how it looked when it ended. */
export function answerFinished(job: FinishedJob, request: 'get' | 'abort'): Reply {
  if (request === 'abort') return cannotAbort(job.body);
  return (job.shown ??= keptAnswer(job.body));
}

/** An answer sent many times: its body is serialized to UTF-8 once (and compressed once, see src/http/respond.ts). */
function keptAnswer(body: JobBody): Reply {
  return { ...ok(body), json: new TextEncoder().encode(JSON.stringify(body)) };
}

function cannotAbort(s: { id: string; status: string }): Reply {
  return fail(409, `Job ${s.id} is ${s.status} and cannot be aborted.`);
}

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
  const { store, transport } = ports;
  // A job's nodes are fixed when it is made: their names are sorted once, for every rendering.
  const names = Object.keys(initial.nodes).sort();
  const freshMs = keptRenderingMs(names.length);
  // The job rendered once per change: a job polled while 10,000 nodes answer is not rendered for every poll.
  let rendered: JobBody | undefined;
  const body = (state: JobState) => (rendered ??= jobJson(state, names));
  let storedAnswer: { version: number; status: JobState['status']; at: number; reply: Reply } | undefined;
  // The machine steps the state in place, so this one object is the job's state for the actor's whole life.
  // A save refused is tried twice a second, for as long as Redis is away or the lease in doubt: said once in a while.
  let failureLoggedAt = -Infinity;
  const saver = new JobSaver(() => initial, {
    write: (save) => writeJob(store, org, initial.id, save),
    failed: (error) => {
      const at = ports.now();
      if (at - failureLoggedAt < SAVE_FAILURE_LOG_EVERY_MS) return;
      failureLoggedAt = at;
      ports.log.error('saving a job failed; retrying', { org, job: initial.id, error });
    },
    retryMs: SAVE_RETRY_MS,
  });

  // Unref'd: a pending deadline must not keep a stopped server's process alive; live sockets do that.
  const arm = (timer: 'voting' | 'run', at: number) => {
    const wait = at - ports.now();
    if (wait > MAX_TIMER_MS) ports.timers.after(MAX_TIMER_MS, () => arm(timer, at), { unref: true });
    else ports.timers.after(Math.max(0, wait), () => dispatch(self, { type: 'timer', timer, at }), { unref: true });
  };

  // One message for every node's ack: the acks a write releases go to a gateway as one order naming their nodes.
  const ack = { type: 'ack_result', job_id: initial.id } as const;

  const send = (e: Extract<JobEffect, { type: 'send' }>) => {
    if (e.message === 'commit') {
      const { job_id, command, run_timeout, options, vote_by } = e;
      const commit = { type: 'commit' as const, job_id, command, run_timeout, ...options };
      for (const node of e.nodes) transport.send(org, node, commit, vote_by);
    } else {
      const message = { type: e.message, job_id: e.job_id };
      for (const node of e.nodes) transport.send(org, node, message);
    }
  };

  const run = (state: JobState, effects: readonly JobEffect[], answer?: NodeAnswerMessage & { node: string }) => {
    for (const e of effects) {
      switch (e.type) {
        case 'save_output':
          if (answer?.node === e.node) {
            const { stdout = '', stderr = '', truncated = false } = answer;
            saver.output(e.node, { stdout, stderr, truncated });
          }
          break;
        case 'persist': {
          rendered = undefined;
          saver.changed(e.job, e.nodes);
          if (e.job) {
            const header = headerOf(state);
            saver.afterSaved(() => owner.saved(header));
          }
          break;
        }
        case 'send':
          saver.afterSaved(() => send(e));
          break;
        case 'arm':
          saver.afterSaved(() => arm(e.timer, e.at));
          break;
        case 'feed':
          saver.afterSaved(() => ports.feeds.publish(org, state.id, e.notes, e.at));
          break;
        case 'finished': {
          const final = jobJson(state, names);
          saver.afterSaved(() => owner.finished(state.id, final));
          break;
        }
        case 'ignored':
          ports.counters.inc('job_ignored', e.reason);
          ports.log.debug('job event ignored', { org, job: state.id, reason: e.reason, event: e.event, node: e.node });
          break;
        case 'rejected':
          break; // the abort request it answers is refused by the caller
      }
    }
  };

  // The job's machine steps its state in place: the interpreter holds the one state object of the actor's life.
  const machine = new Interpreter<JobState, JobEvent, JobEffect, NodeAnswerMessage & { node: string }>(
    stepJob,
    initial,
    run,
  );

  /**
   * An answer shows the state as it is now, so it leaves once that state is stored; while the store is down it
   * leaves at once, from memory, rather than wait for the store to return.
   */
  const answer = (replyTo: Ref<Reply>, reply: Reply) => saver.answerAfterSaved(() => dispatch(replyTo, reply));

  /**
   * A new job is stored whole before it starts, in its own turn: the messages told it meanwhile wait, and nothing of
   * it is visible (its row, its feed, its commits) before the store holds it.
   */
  const create = async (state: JobState, msg: Extract<JobMsg, { type: 'begin' }>, me: Ref<JobMsg>) => {
    const refuse = (reply: Reply) => {
      if (msg.answer) dispatch(msg.answer.replyTo, reply);
      owner.refused(state.id);
      stop(me);
      return state;
    };
    try {
      await writeJob(store, org, state.id, saveOf(state));
    } catch (e) {
      return refuse(storeFailure(ports.log, e));
    }
    if (owner.deleted()) return refuse(fail(404, `organization '${org}' does not exist.`));
    return begin(state, msg);
  };

  const begin = (state: JobState, msg: Extract<JobMsg, { type: 'begin' }>): JobState => {
    ports.feeds.jobStarted(org, state.id);
    machine.send({ type: msg.restored ? 'restored' : 'start', at: ports.now(), available: msg.available });
    if (msg.answer) answer(msg.answer.replyTo, msg.answer.reply);
    return state;
  };

  const receive = (state: JobState, msg: JobMsg, me: Ref<JobMsg>): JobState | Promise<JobState> => {
    const at = ports.now();
    switch (msg.type) {
      case 'begin':
        return msg.restored ? begin(state, msg) : create(state, msg, me);
      case 'answer': {
        const m = msg.message;
        const event: JobEvent = { type: m.type, at, node: msg.node };
        if (typeof m.exit_status === 'number') event.exit_status = m.exit_status;
        if (m.stdout !== undefined || m.stderr !== undefined) event.output = true;
        machine.send(event, { ...m, node: msg.node });
        // A result is acknowledged once every change stepped so far is stored, so never before itself: its client
        // stops sending it then. A duplicate, or one the job does not take, is acknowledged too: the job is done
        // with it. A job whose lease is taken meanwhile sends nothing more, and the client sends it again to the
        // next owner.
        if (m.type === 'succeeded' || m.type === 'failed') saver.afterSaved(() => transport.send(org, msg.node, ack));
        msg.stored?.(saver.durable());
        break;
      }
      case 'node_down':
        machine.send({ type: 'node_down', at, node: msg.node });
        break;
      case 'node_reached':
        machine.send({ type: 'node_reached', at, node: msg.node });
        break;
      case 'timer':
        machine.send({ type: msg.timer === 'voting' ? 'voting_timeout' : 'run_timeout', at: msg.at });
        break;
      case 'abort': {
        const effects = machine.send({ type: 'abort', at });
        answer(
          msg.replyTo,
          answerAbout(
            state,
            'abort',
            effects.some((e) => e.type === 'rejected'),
            body(state),
          ),
        );
        break;
      }
      case 'stop':
        stop(me);
        if (msg.replyTo) dispatch(msg.replyTo, true);
        break;
      case 'write_back':
        saver.changed(true, Object.keys(state.nodes));
        break;
    }
    return state;
  };

  // The state may be half-stepped: the machine's crash event trusts none of it. The job is saved `crashed`, its
  // nodes are told to drop it, and whoever asked is answered from the crashed job.
  const onCrash = (state: JobState, msg: JobMsg): JobState => {
    rendered = undefined;
    machine.send({ type: 'crash', at: ports.now() });
    if (msg.type === 'abort') answer(msg.replyTo, answerAbout(state, 'abort', true));
    if (msg.type === 'begin' && msg.answer) answer(msg.answer.replyTo, msg.answer.reply);
    if (msg.type === 'answer') msg.stored?.(saver.durable());
    return state;
  };

  const self = spawnSupervised(parent, { name: `job-${initial.id}`, initial, receive, onCrash }, ports.reporter);
  const shown = (): Reply => {
    if (saver.failing) return ok(body(initial));
    const stored = saver.stored;
    const now = ports.now();
    const last = storedAnswer;
    const current =
      last !== undefined &&
      (last.version === saver.version || (last.status === stored.status && now - last.at < freshMs));
    if (current) return last.reply;
    const shownBody = jobJson(stored, names);
    storedAnswer = {
      version: saver.version,
      status: stored.status,
      at: now,
      reply: keptAnswer(shownBody),
    };
    return storedAnswer.reply;
  };
  return { ref: self, saved: () => saver.saved(), stored: () => saver.durable(), letGo: () => saver.stop(), shown };
}
