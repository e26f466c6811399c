// One job actor per job: it feeds events to the pure job machine and runs the effects in order. A state
// change is persisted before any message, timer or answer makes it visible (spec 3; reference 5).
import { dispatch, spawn, type Ref } from 'nact';
import { httpDate } from '../src/lib/clock.js';
import { jobNodesByStatus, stepJob } from './job-machine.js';
import { isTerminal, type JobEffect, type JobEvent, type JobState } from './job-model.js';
import type { NodeAnswerMessage, PushPorts } from './push-ports.js';
import { fail, ok, type Reply } from './reply.js';

export type JobMsg =
  | { type: 'begin'; available: ReadonlySet<string>; restored: boolean }
  | { type: 'answer'; node: string; message: NodeAnswerMessage }
  | { type: 'node_down'; node: string }
  | { type: 'timer'; timer: 'voting' | 'run'; at: number }
  | { type: 'abort'; replyTo: Ref<Reply> }
  | { type: 'get'; replyTo: Ref<Reply> };

/** The row of the job list (spec 4.1), kept by the organization for every job. */
export interface JobSummary {
  id: string;
  command: string;
  status: JobState['status'];
  run_timeout: number;
  created_at: number;
  updated_at: number;
}

export interface JobParent {
  /** Tells the organization a job's row changed (after it is persisted). */
  summary(s: JobSummary): void;
}

export function jobsCollection(org: string): string {
  return `org/${org}/jobs`;
}
export function outputsCollection(org: string): string {
  return `org/${org}/job_outputs`;
}

/** setTimeout takes at most 2^31-1 ms; longer deadlines are reached in several waits. */
const MAX_TIMER_MS = 2_147_483_647;
const PERSIST_RETRY_MS = 500;

export function summaryOf(s: JobState): JobSummary {
  return { id: s.id, command: s.command, status: s.status, run_timeout: s.run_timeout, created_at: s.created_at, updated_at: s.updated_at };
}

export function jobJson(s: JobState): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: s.id, command: s.command, run_timeout: s.run_timeout, status: s.status,
    created_at: httpDate(s.created_at), updated_at: httpDate(s.updated_at), quorum: s.quorum,
    nodes: jobNodesByStatus(s), capture_output: s.options.capture === true,
    node_updated_at: Object.fromEntries(Object.entries(s.node_updated_at).map(([n, at]) => [n, httpDate(at)])),
  };
  if (s.options.env !== undefined) body.env = s.options.env;
  if (s.options.dir !== undefined) body.dir = s.options.dir;
  if (s.options.user !== undefined) body.user = s.options.user;
  return body;
}

export function spawnJob(parent: Ref<unknown>, org: string, initial: JobState, ports: PushPorts, owner: JobParent): Ref<JobMsg> {
  const store = ports.store;
  let self: Ref<JobMsg> | undefined;

  // Unref'd: a pending deadline must not keep a stopped server's process alive; live sockets do that.
  const arm = (timer: 'voting' | 'run', at: number) => {
    const wait = at - ports.now();
    if (wait > MAX_TIMER_MS) setTimeout(() => arm(timer, at), MAX_TIMER_MS).unref();
    else setTimeout(() => self && dispatch(self, { type: 'timer', timer, at }), Math.max(0, wait)).unref();
  };

  // A store that does not answer holds the job back rather than letting memory run ahead of it.
  const persist = async (state: JobState) => {
    for (;;) {
      try {
        await store.put(jobsCollection(org), state.id, state);
        owner.summary(summaryOf(state));
        return;
      } catch (e) {
        console.error(`job ${state.id}: saving failed, retrying: ${e instanceof Error ? e.message : String(e)}`);
        await new Promise((r) => setTimeout(r, PERSIST_RETRY_MS));
      }
    }
  };

  const run = async (state: JobState, effects: readonly JobEffect[], answer?: { node: string; message: NodeAnswerMessage }) => {
    for (const e of effects) {
      switch (e.type) {
        case 'save_output':
          if (answer?.node === e.node) {
            const { stdout = '', stderr = '', truncated = false } = answer.message;
            await store.put(outputsCollection(org), `${state.id}/${e.node}`, { stdout, stderr, truncated });
          }
          break;
        case 'persist':
          await persist(state);
          break;
        case 'send':
          for (const node of e.nodes) {
            if (e.message === 'commit') {
              ports.send(org, node, { type: 'commit', job_id: e.job_id, command: e.command, run_timeout: e.run_timeout, ...e.options });
            } else {
              ports.send(org, node, { type: e.message, job_id: e.job_id });
            }
          }
          break;
        case 'arm':
          arm(e.timer, e.at);
          break;
        case 'finished':
        case 'ignored':
        case 'rejected':
          break;
      }
    }
  };

  const step = async (state: JobState, event: JobEvent, answer?: { node: string; message: NodeAnswerMessage }) => {
    const { effects } = stepJob(state, event);
    await run(state, effects, answer);
    return effects;
  };

  self = spawn(parent as Ref<never>, async (state: JobState, msg: JobMsg) => {
    const at = ports.now();
    switch (msg.type) {
      case 'begin':
        await step(state, msg.restored ? { type: 'restored', at, available: msg.available } : { type: 'start', at, available: msg.available });
        break;
      case 'answer': {
        const m = msg.message;
        const event: JobEvent = { type: m.type, at, node: msg.node };
        if (typeof m.exit_status === 'number') event.exit_status = m.exit_status;
        if (m.stdout !== undefined || m.stderr !== undefined) event.output = true;
        await step(state, event, msg);
        break;
      }
      case 'node_down':
        if (!isTerminal(state.status)) await step(state, { type: 'node_down', at, node: msg.node });
        break;
      case 'timer':
        await step(state, { type: msg.timer === 'voting' ? 'voting_timeout' : 'run_timeout', at: msg.at });
        break;
      case 'abort': {
        const effects = await step(state, { type: 'abort', at });
        const rejected = effects.find((e) => e.type === 'rejected');
        dispatch(msg.replyTo, rejected ? fail(409, `Job ${state.id} is ${state.status} and cannot be aborted.`) : ok(jobJson(state)));
        break;
      }
      case 'get':
        dispatch(msg.replyTo, ok(jobJson(state)));
        break;
    }
    return state;
  }, `job-${initial.id}`, { initialState: initial });
  return self;
}
