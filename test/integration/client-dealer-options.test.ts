// The options of a client's two channels, read back from real zeromq sockets made with them.
import t from 'tap';
import { curveKeyPair, Dealer } from 'zeromq';
import { dealerOptions } from '../../src/client/connection.js';
import type { PushConfig } from '../../src/client/push-config.js';

const server = curveKeyPair();
const config: PushConfig = {
  heartbeatAddr: 'tcp://127.0.0.1:10000',
  commandAddr: 'tcp://127.0.0.1:10002',
  intervalMs: 1000,
  offlineThreshold: 3,
  curveServerKey: server.publicKey,
  sessionKey: Buffer.alloc(32, 1),
  lifetimeMs: 3_600_000,
  incarnationId: '6a4c0cf3-2a4e-4b47-9d55-1a3b7b1f0c11',
  maxMessageSkew: 300,
  maxBodySize: 65536,
  servers: [],
};

t.test('a channel sends no ZMTP heartbeats: the push-jobs heartbeats tell a silent server', async (t) => {
  const dealer = new Dealer(dealerOptions(config, 'node-1', curveKeyPair()));
  t.teardown(() => dealer.close());
  // libzmq sends a PING each heartbeatInterval on every connection, each one encrypted: 0 is off.
  t.equal(dealer.heartbeatInterval, 0);
  t.equal(dealer.heartbeatTimeout, -1);
});

t.test('a channel closes a connection whose server host vanished, by TCP keepalives, within a minute', async (t) => {
  const dealer = new Dealer(dealerOptions(config, 'node-1', null));
  t.teardown(() => dealer.close());
  t.equal(dealer.tcpKeepalive, 1);
  const closesAfter = dealer.tcpKeepaliveIdle + dealer.tcpKeepaliveInterval * dealer.tcpKeepaliveCount;
  t.ok(closesAfter > 0 && closesAfter <= 60, `closed ${closesAfter} s after the server fell silent`);
});

t.test(
  'the channel keeps what the server relies on: its routing id, no queue while unconnected, no linger',
  async (t) => {
    const dealer = new Dealer(dealerOptions(config, 'node-1', curveKeyPair()));
    t.teardown(() => dealer.close());
    t.equal(dealer.routingId, 'node-1');
    t.equal(dealer.immediate, true);
    t.equal(dealer.linger, 0);
    t.equal(dealer.securityMechanism, 'curve');
  },
);
