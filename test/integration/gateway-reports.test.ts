// What a gateway reports of a node is applied in the order of its own clock: a report older than the last one the
// same gateway made (an inbox entry applied again after newer ones, claimed from an owner that died before it
// acknowledged it) changes nothing, even once the organization was restored from the store by another owner.
import t from 'tap';
import type { GatewayReport } from '../../src/cluster/node-link-messages.js';
import { startTestServer, type TestServer } from '../support/server.js';

const at = Date.UTC(2026, 11, 1, 12, 0, 0);

function availability(status: 'up' | 'down', updatedAt: number): GatewayReport {
  return {
    t: 'availability',
    org: 'default',
    node: 'web1',
    change: { status, available: status === 'up', updated_at: updatedAt, incarnation: null, restarted: false },
  };
}

async function statusOf(server: TestServer): Promise<unknown> {
  const res = await server.admin.request('GET', '/organizations/default/pushy/node_states/web1');
  return (res.body as { status?: unknown }).status;
}

t.test('a late copy of a gateway’s report does not move a node back', async (t) => {
  const server = await startTestServer(t, 'redis');
  const { system } = server.running;
  t.equal(await system.fromGateway('default', 'gw1', [availability('down', at)]), true);
  t.equal(await system.fromGateway('default', 'gw1', [availability('up', at + 5000)]), true);
  t.equal(await statusOf(server), 'up', 'the gateway’s newer report stands');
  t.equal(await system.fromGateway('default', 'gw1', [availability('down', at)]), true, 'a late copy is taken');
  t.equal(await statusOf(server), 'up', 'and changes nothing');
  t.equal(await system.fromGateway('default', 'gw1', [availability('down', at + 9000)]), true);
  t.equal(await statusOf(server), 'down', 'a newer report of the same gateway is applied');

  const restarted = await server.restart();
  t.equal(await restarted.running.system.fromGateway('default', 'gw1', [availability('up', at + 5000)]), true);
  t.equal(await statusOf(restarted), 'down', 'restored from the store, the record still knows which report came last');
});
