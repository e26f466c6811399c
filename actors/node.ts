// One node actor per node with a live client: it follows the node's heartbeats through the pure node
// machine (spec 3.3) and passes the node's job answers to their job actors. A heartbeat ends here.
import { dispatch, spawn, type Ref } from 'nact';
import type { JobMsg } from './job.js';
import { stepNode, type NodeEffect, type NodeState } from './node-machine.js';
import type { NodeAnswerMessage, PushPorts } from './push-ports.js';

export type NodeMsg =
  /** `job`: the job the client says it holds (reference 2.7), or null when idle. */
  | { type: 'heartbeat'; at: number; incarnation: string; job: string | null }
  | { type: 'tick'; at: number }
  | { type: 'answer'; at: number; message: NodeAnswerMessage };

export interface NodeParent {
  /** Availability changed, or the client restarted (`restarted`): jobs must see the node as gone. */
  availability(node: string, change: { status: 'up' | 'down'; available: boolean; updated_at: number; incarnation: string | null; restarted: boolean }): void;
  /** The live actor of a job of this organization. */
  job(id: string): Ref<JobMsg> | undefined;
}

export function spawnNode(parent: Ref<unknown>, org: string, initial: NodeState, ports: PushPorts, owner: NodeParent): Ref<NodeMsg> {
  const name = initial.node_name;
  const run = (state: NodeState, effects: readonly NodeEffect[]) => {
    for (const e of effects) {
      if (e.type === 'availability_changed') {
        owner.availability(name, { status: e.status, available: e.available, updated_at: e.updated_at, incarnation: state.incarnation, restarted: false });
      } else if (e.type === 'incarnation_changed') {
        owner.availability(name, { status: state.status, available: false, updated_at: state.updated_at, incarnation: e.to, restarted: true });
      } else if (e.type === 'send' && e.message === 'abort') {
        ports.send(org, name, { type: 'abort', job_id: null });
      }
      // `ack` proves a reconnected channel in the original; our heartbeats already flow both ways.
    }
  };

  return spawn(parent as Ref<never>, (state: NodeState, msg: NodeMsg) => {
    switch (msg.type) {
      case 'heartbeat': {
        const step = stepNode(state, msg);
        if (step.effects.length > 0) run(step.state, step.effects);
        // A client holding a job this server does not run (any more) is reset, as after a restart.
        if (msg.job === null || owner.job(msg.job)) return step.state;
        const reset = stepNode(step.state, { type: 'rehab', at: msg.at });
        if (reset.effects.length > 0) run(reset.state, reset.effects);
        return reset.state;
      }
      case 'tick': {
        const step = stepNode(state, msg);
        if (step.effects.length > 0) run(step.state, step.effects);
        return step.state;
      }
      case 'answer': {
        let next = state;
        if (msg.message.type === 'aborted') {
          const step = stepNode(state, { type: 'aborted', at: msg.at });
          run(step.state, step.effects);
          next = step.state;
        }
        const jobId = msg.message.job_id;
        const job = jobId === null ? undefined : owner.job(jobId);
        if (job) {
          dispatch(job, { type: 'answer', node: name, message: msg.message });
        } else if (jobId !== null && (msg.message.type === 'ack_commit' || msg.message.type === 'ack_run')) {
          // The node holds a job this server does not run (any more): reset it.
          const step = stepNode(next, { type: 'rehab', at: msg.at });
          run(step.state, step.effects);
          next = step.state;
        }
        return next;
      }
    }
  }, `node-${name}`, { initialState: initial });
}
