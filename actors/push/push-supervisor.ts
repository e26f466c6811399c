// An organization's push supervisor: the actor under the organization that holds its push jobs and node followers
// (push-runtime.ts). The organization authorizes a push-jobs request and hands it here once; a job POST goes
// organization -> supervisor -> job, each hop once. The supervisor's children and timers report here, and its
// ticks drive the write-behind of node states, retention and the sweeps of silent nodes.
import { dispatch, query, type Ref } from 'nact';
import type { GatewayReport } from '../../src/cluster/node-link-messages.js';
import type { Logger } from '../../src/lib/logger.js';
import { internalError, type Reply } from '../shared/reply.js';
import { spawnSupervised } from '../shared/supervision.js';
import type { JobState } from './job-model.js';
import type { NodeFollower } from './node.js';
import type { PushPorts } from './ports.js';
import type { NodeAvailability, PushData } from './push-data.js';
import type { PushRequest } from './push-requests.js';
import type { PushReport } from './push-requests.js';
import { PushRuntime } from './push-runtime.js';

/**
 * Sweeps of the nodes an interval (see PushRuntime.sweep): a node is marked down within a twentieth of an interval
 * of its `offline_threshold` running out, and its unanswered rehab abort resent as soon after an interval.
 */
export const SWEEPS_PER_INTERVAL = 20;

/** nact's longest timer: a release is not cut short (see PushSupervisor.release). */
const NO_TIMEOUT_MS = 2_147_483_647;

export type PushMsg =
  | PushReport
  /** `requesterKey`: the requester's public key, which alone can read a config answer's session key. */
  | { type: 'request'; request: PushRequest; requesterKey: string; replyTo: Ref<Reply> }
  | { type: 'release'; replyTo: Ref<true> }
  | { type: 'write_back'; replyTo: Ref<boolean> }
  | { type: 'drop'; replyTo: Ref<true> };

/** What the organization and the transport hold of the supervisor. */
export interface PushSupervisor {
  ref: Ref<PushMsg>;
  /** The node's follower, made on demand: the transport calls this only for authenticated messages. */
  nodeFollower(node: string): NodeFollower;
  /** The node records, read between the supervisor's turns (the metrics' counts). */
  records: ReadonlyMap<string, NodeAvailability>;
  /** Resumes the jobs in flight and starts the silence clocks of the nodes that were up (see PushRuntime.resume). */
  resume(inFlight: readonly JobState[]): void;
  /** Applies what a gateway heard from the organization's nodes; resolves once it is stored. */
  fromGateway(gateway: string, events: readonly GatewayReport[]): Promise<void>;
  /** The store lost what it held: the supervisor writes everything again; resolves whether it did. */
  writeBack(): Promise<boolean>;
  /** The organization is deleted: nothing of it is written from now on. */
  drop(): Promise<void>;
  /** Everything handed on before is handled and stored, its jobs are stopped, and nothing more reaches it. */
  release(): Promise<void>;
  /** Its timers stop and what waits to be stored is stored. */
  stop(): Promise<void>;
}

export function spawnPushSupervisor(
  parent: Ref<unknown>,
  org: string,
  data: PushData,
  ports: PushPorts,
): PushSupervisor {
  // The runtime reaches the actor through this; it runs only once the actor below exists.
  const runtime = new PushRuntime(org, data, ports, () => self);
  const log = ports.log.child({ org });
  const self: Ref<PushMsg> = spawnSupervised<PushRuntime, PushMsg>(
    parent,
    { name: 'push', initial: runtime, receive: (rt, msg) => receive(rt, msg, log), onCrash },
    ports.reporter,
  );
  runtime.startTicks(SWEEPS_PER_INTERVAL);
  const asked = <R>(build: (replyTo: Ref<R>) => PushMsg) => query(self, build, NO_TIMEOUT_MS) as Promise<R>;
  return {
    ref: self,
    nodeFollower: (node) => runtime.nodeFollower(node),
    records: data.records,
    resume: (inFlight) => runtime.resume(inFlight),
    fromGateway: (gateway, events) =>
      new Promise<void>((resolve, reject) =>
        dispatch(self, {
          type: 'gateway_events',
          gateway,
          events,
          stored: (saved) => void saved.then(resolve, reject),
        }),
      ),
    writeBack: () => asked<boolean>((replyTo) => ({ type: 'write_back', replyTo })),
    drop: () => asked<true>((replyTo) => ({ type: 'drop', replyTo })).then(() => undefined),
    release: () => asked<true>((replyTo) => ({ type: 'release', replyTo })).then(() => undefined),
    stop: async () => {
      runtime.stopTicks();
      await runtime.whenSaved();
    },
  };
}

async function receive(rt: PushRuntime, msg: PushMsg, log: Logger): Promise<PushRuntime> {
  switch (msg.type) {
    case 'request':
      rt.request(msg.request, msg.requesterKey, msg.replyTo);
      break;
    case 'release':
      try {
        await rt.release();
      } finally {
        dispatch(msg.replyTo, true);
      }
      break;
    case 'write_back':
      try {
        await rt.writeBack();
        dispatch(msg.replyTo, true);
      } catch (e) {
        log.error('writing the push jobs and node states back failed', { error: e });
        dispatch(msg.replyTo, false);
      }
      break;
    case 'drop':
      await rt.drop();
      dispatch(msg.replyTo, true);
      break;
    default:
      rt.report(msg);
  }
  return rt;
}

/** The runtime's state changes only in whole steps, so it is whole after a throw: whoever waited is answered. */
function onCrash(rt: PushRuntime, msg: PushMsg): PushRuntime {
  if (msg.type === 'request') dispatch(msg.replyTo, internalError());
  else if (msg.type === 'write_back') dispatch(msg.replyTo, false);
  else if (msg.type === 'release' || msg.type === 'drop') dispatch(msg.replyTo, true);
  else if (msg.type === 'gateway_events') msg.stored(Promise.reject(new Error('the push supervisor crashed')));
  return rt;
}
