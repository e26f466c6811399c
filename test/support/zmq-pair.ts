// A bound ROUTER on a free loopback port and one DEALER connected to it (routing id `node-1`), both closed when
// the test ends: the smallest real ZeroMQ link for testing what reads or writes a socket.
import type { Test } from 'tap';
import { Dealer, Router } from 'zeromq';
import { connectSocket } from '../../src/protocol/socket-connect.js';

export async function routerDealerPair(t: Test): Promise<{ router: Router; dealer: Dealer }> {
  const router = new Router({ linger: 0 });
  await router.bind('tcp://127.0.0.1:*');
  const dealer = new Dealer({ linger: 0, routingId: 'node-1' });
  connectSocket(dealer, router.lastEndpoint ?? '');
  t.teardown(() => {
    router.close();
    dealer.close();
  });
  return { router, dealer };
}
