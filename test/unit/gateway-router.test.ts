// The orders between a cluster's owners and gateways, as routed by one member: a gateway obeys no order older than
// the newest owner's epoch it has heard, and an owner whose lease is in doubt orders and sends nothing.
import t from 'tap';
import type { GatewayFollowers, GatewaySessions, MemberView } from '../../src/cluster/gateway-ports.js';
import { GatewayRouter } from '../../src/cluster/gateway-router.js';
import type { NodeLink } from '../../src/cluster/node-link.js';
import type { GatewayOrder } from '../../src/cluster/node-link-messages.js';
import type { NodeAnswerMessage, OutboundMessage, PushDescription } from '../../src/protocol/node-messages.js';
import { quietLogger } from '../support/logs.js';

const commit: OutboundMessage = { type: 'commit', job_id: 'j1', command: 'hello', run_timeout: 60 };
const abort: OutboundMessage = { type: 'abort', job_id: 'j1' };

/** A member `me` routing for organization acme, its lease epoch on acme's partition set by the test. */
function router(me: string, gatewayOfNode = 'other') {
  const written: Array<{ gateway: string; order: GatewayOrder }> = [];
  const sentHere: Array<{ node: string; message: OutboundMessage }> = [];
  const lease: { epoch: number | undefined } = { epoch: undefined };
  const link = { order: (gateway: string, order: GatewayOrder) => written.push({ gateway, order }) };
  const relayed: Array<{ node: string; message: NodeAnswerMessage }> = [];
  const gateways = {
    sent: () => undefined,
    over: () => undefined,
    relay: (_org: string, node: string, _at: number, message: NodeAnswerMessage) => relayed.push({ node, message }),
  };
  const cluster: MemberView = {
    link: link as unknown as NodeLink,
    gateways: gateways as unknown as GatewayFollowers,
    members: () => [
      {
        id: 'me',
        url: '',
        host: '',
        pid: 1,
        started_at: 0,
        push: { heartbeat_addr: '', command_addr: '', incarnation_id: '' },
      },
      {
        id: 'other',
        url: '',
        host: '',
        pid: 2,
        started_at: 0,
        push: { heartbeat_addr: '', command_addr: '', incarnation_id: '' },
      },
    ],
    owns: () => lease.epoch !== undefined,
    epochOf: () => lease.epoch,
  };
  const sessions = { gatewayOf: () => gatewayOfNode } as unknown as GatewaySessions;
  const here = {
    send: { send: (_org: string, node: string, message: OutboundMessage) => void sentHere.push({ node, message }) },
    peers: { forget: () => undefined },
    channels: { describe: () => ({}) as PushDescription },
  };
  return { r: new GatewayRouter(me, cluster, sessions, here, quietLogger()), written, sentHere, lease, relayed };
}

const send = (epoch: number, message: OutboundMessage): GatewayOrder => ({
  t: 'send',
  org: 'acme',
  epoch,
  nodes: ['n1'],
  message,
});

t.test('a gateway obeys no order older than the newest owner it heard from', async (t) => {
  const { r, sentHere } = router('me');
  r.orders([send(20, commit)]);
  // The owner of epoch 10 was deposed (paused past its lease); it wakes and writes what it had queued.
  r.orders([send(10, abort)]);
  r.orders([send(20, { type: 'run', job_id: 'j1' })]);
  t.same(
    sentHere.map((s) => s.message.type),
    ['commit', 'run'],
    'the deposed owner’s abort never reaches the node',
  );
  t.equal(r.staleOrders, 1, 'and it is counted');
});

t.test('a gateway that owns the organization itself obeys no order from an older owner', async (t) => {
  const { r, sentHere, lease } = router('me');
  lease.epoch = 30;
  r.orders([send(20, abort)]);
  t.same(sentHere, [], 'nothing from the owner it took over from');
  r.orders([send(31, commit)]);
  t.same(
    sentHere.map((s) => s.message.type),
    ['commit'],
    'an owner newer than itself is obeyed',
  );
});

t.test('an owner whose lease is in doubt orders nothing and may not act', async (t) => {
  const { r, written } = router('me');
  t.equal(r.mayAct('acme'), false, 'no lease: it may not act');
  r.rollCall('acme');
  t.same(written, [], 'and writes no order');
  t.ok(r.unsentInDoubt >= 1, 'which is counted');
});

t.test('an owner’s message for a node of another gateway carries its epoch', async (t) => {
  const { r, written, lease } = router('me');
  lease.epoch = 42;
  t.equal(r.mayAct('acme'), true);
  t.equal(r.sendElsewhere('acme', 'n1', commit, 1000), true, 'handed to the node’s gateway');
  t.same(written, [{ gateway: 'other', order: { ...send(42, commit), vote_by: 1000 } }]);
});

t.test(
  'a node’s answer read while the lease is in doubt goes to the owner’s inbox, not to this owner’s jobs',
  async (t) => {
    const { r, lease, relayed } = router('me', 'me');
    const result: NodeAnswerMessage = { type: 'succeeded', job_id: 'j1', exit_status: 0 };
    lease.epoch = 7;
    t.notOk(r.relayed('acme', 'n1', 1000, result), 'the lease sure: this process’s own job takes it');
    t.same(relayed, []);
    // Woken from a pause past the lease: another member may own acme now, and this one's jobs can store nothing.
    lease.epoch = undefined;
    t.ok(r.relayed('acme', 'n1', 2000, result), 'in doubt: handed on');
    t.same(relayed, [{ node: 'n1', message: result }], 'as a gateway’s answer, for whichever member holds the lease');
    t.equal(r.answersRelayed, 1, 'and counted');
  },
);
