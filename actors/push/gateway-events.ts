// What a gateway (another member of the cluster) heard from an organization's nodes, applied by the organization's
// owner in order: only the gateway that speaks for a node counts (PushCluster.heardAt), a late copy of a report is
// ignored, and the events resolve once what they changed is stored, so the gateway's inbox entry is acknowledged
// only then.
import type { GatewayReport } from '../../src/cluster/node-link-messages.js';
import { dispatch, type Ref } from 'nact';
import type { JobMsg } from './job-messages.js';
import type { AvailabilityChange } from './node.js';
import type { PushPorts } from './ports.js';
import type { NodeAvailability } from './push-data.js';

/** What the owner's push runtime offers the events. */
export interface EventsRuntime {
  readonly org: string;
  readonly ports: PushPorts;
  readonly records: ReadonlyMap<string, NodeAvailability>;
  /** The live job's actor, if it runs. */
  job(id: string): Ref<JobMsg> | undefined;
  /** The node is followed at a gateway now: this process's follower of it goes. */
  unfollow(node: string): void;
  /** The node's availability changed, as `gateway` reported it. */
  changed(node: string, change: AvailabilityChange, gateway: string): void;
  /** The node was heard at a gateway it was not heard at before. */
  reached(node: string): void;
  /** Writes the node states changed so far. */
  flush(): Promise<void>;
}

export function applyGatewayEvents(
  rt: EventsRuntime,
  gateway: string,
  events: readonly GatewayReport[],
): Promise<void> {
  const { cluster, counters } = rt.ports;
  const stored: Array<Promise<unknown>> = [];
  for (const e of events) {
    if (!cluster.heardAt(rt.org, e.node, gateway)) {
      counters.inc('node_ignored', 'not_its_gateway');
      continue;
    }
    if ((e.t === 'attached' || e.t === 'availability') && isLateCopy(rt.records, e.node, gateway, e.change)) {
      counters.inc('node_ignored', 'stale_report');
      continue;
    }
    switch (e.t) {
      case 'attached': {
        rt.unfollow(e.node);
        const known = rt.records.get(e.node);
        // A gateway that just heard the node made its follower from the stored record, which may be older than this
        // owner's (node states are written behind; a job in flight vouches for its nodes): this record stands.
        if (known?.status === 'up' && e.change.status === 'down') cluster.nodeState(rt.org, e.node, gateway, known);
        else rt.changed(e.node, e.change, gateway);
        rt.reached(e.node);
        break;
      }
      case 'availability':
        rt.unfollow(e.node);
        rt.changed(e.node, e.change, gateway);
        break;
      case 'answer': {
        const answered = answer(rt, e);
        if (answered) stored.push(answered);
        break;
      }
      case 'holds':
        if (!rt.job(e.job)) cluster.jobOver(rt.org, e.job, gateway);
        break;
    }
  }
  return Promise.all([rt.flush(), ...stored]).then(() => undefined);
}

/** A node's answer, for its job if that runs; what it changed is stored once the promise resolves. */
function answer(rt: EventsRuntime, e: Extract<GatewayReport, { t: 'answer' }>): Promise<void> | undefined {
  // A job no longer live ended, and its record is stored: the answer changes nothing of it. A result for it (its
  // gateway did not know it had ended) is acknowledged, as node.ts does here.
  const id = e.message.job_id;
  const job = id === null ? undefined : rt.job(id);
  if (!job && id !== null && (e.message.type === 'succeeded' || e.message.type === 'failed'))
    rt.ports.transport.send(rt.org, e.node, { type: 'ack_result', job_id: id });
  if (!job) return undefined;
  // Told in this turn, before any stop of the job (job_retired comes through the same mailbox), so the job handles
  // the answer and says when its change is stored, or that the store refused it.
  return new Promise<void>((resolve, reject) =>
    dispatch(job, {
      type: 'answer',
      node: e.node,
      message: e.message,
      stored: (saved) => void saved.then(resolve, reject),
    }),
  );
}

/**
 * Whether a gateway's report of a node is older than the one it made before, which the record holds: an inbox
 * entry applied again after newer ones (claimed from an owner that died before acknowledging it). Reports of one
 * gateway share its clock; those of two gateways are ordered by which one speaks for the node (heardAt).
 */
function isLateCopy(
  records: ReadonlyMap<string, NodeAvailability>,
  node: string,
  gateway: string,
  change: AvailabilityChange,
): boolean {
  const known = records.get(node);
  return known?.gateway === gateway && change.updated_at < known.updated_at;
}
