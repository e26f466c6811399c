// A node link for a test member, recording what it hears, closed at teardown; and an answer event to send over it.
import type { Test } from 'tap';
import { NodeLink, type NodeLinkHandlers, type NodeLinkOptions } from '../../src/cluster/node-link.js';
import type { GatewayOrder, InboxEntry, GatewayReport } from '../../src/cluster/node-link-messages.js';
import type { RedisClient } from '../../src/store/redis-scripts.js';
import { quietLogger } from './logs.js';

export interface Heard {
  orders: GatewayOrder[];
  inbox: InboxEntry[];
  resyncs: number;
}

/** A started link for member `me`; `store` decides how its inbox entries end (stored or not). */
export function linkOn(
  t: Test,
  redis: RedisClient,
  prefix: string,
  me: string,
  store: (entry: InboxEntry) => Promise<boolean> = async () => true,
  opts: NodeLinkOptions = {},
): { link: NodeLink; heard: Heard } {
  const heard: Heard = { orders: [], inbox: [], resyncs: 0 };
  const handlers: NodeLinkHandlers = {
    orders: (orders) => heard.orders.push(...orders),
    resync: () => (heard.resyncs += 1),
    inbox: (_p, entry) => {
      heard.inbox.push(entry);
      return store(entry);
    },
  };
  const link = new NodeLink(redis, prefix, me, handlers, quietLogger(), opts);
  link.start();
  t.teardown(() => link.close());
  return { link, heard };
}

/** Node `node` acked job j1 of organization acme. */
export const answer = (node: string): GatewayReport => ({
  t: 'answer',
  org: 'acme',
  node,
  at: 1,
  message: { type: 'ack_commit', job_id: 'j1' },
});
