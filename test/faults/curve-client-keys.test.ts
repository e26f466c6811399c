// CurveZMQ admits only the client keys nodes named (`ccpk`) in their config requests, while the session they were
// bound to lives (reference 2.2): a peer holding a node's session key but another Curve key is refused in the
// handshake, so its correctly signed heartbeats never mark the node up; the key named works, on whichever process
// loads the node's session from the store.
import t from 'tap';
import { curveKeyPair } from 'zeromq';
import { registerNode } from '../support/hostile.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { keyPair } from '../support/api-fixtures.js';
import { poll, startTestNode, TestNode } from '../support/test-node.js';

const FAST = { heartbeat_interval: 100, offline_threshold: 3, online_threshold: 2 };

t.test('a Curve key never named in a config request is refused; the named one works on any process', async (t) => {
  const a = await startTestServer(t, 'file', FAST);
  const node = await registerNode(a.admin, a.url, 'keyed');
  const refused = (s: TestServer) => s.running.hub.status().connections.refused.curve_key_unknown;
  const stateOf = async (s: TestServer) =>
    (await s.admin.request('GET', '/organizations/default/pushy/node_states/keyed')).body as { status: string };

  // It holds the node's session key, so its heartbeats are signed correctly, but its Curve key is its own.
  const impostor = new TestNode(a, 'keyed', 'default', node.sessionKey, node.config, {}, null, false, curveKeyPair());
  t.teardown(() => impostor.stop());
  const refusedBefore = refused(a);
  const heard = a.running.hub.status().heartbeats;
  impostor.resumeHeartbeats();
  const beats = () => impostor.sent.filter((r) => r.body.type === 'heartbeat').length;
  await poll('the impostor to beat past the online threshold, refused on both channels', () =>
    beats() >= FAST.online_threshold + 4 && refused(a) >= refusedBefore + 2 ? true : undefined,
  );
  t.equal(a.running.hub.status().heartbeats, heard, 'none of its heartbeats reached the server');
  t.equal((await stateOf(a)).status, 'down', 'the node is not up');
  t.same(impostor.received, [], 'the server told it nothing');
  impostor.stop();

  const real = new TestNode(
    a,
    'keyed',
    'default',
    node.sessionKey,
    node.config,
    {},
    node.clientKeyPem,
    false,
    node.curve,
  );
  t.teardown(() => real.stop());
  real.resumeHeartbeats();
  await real.ready();
  t.equal((await stateOf(a)).status, 'up', 'the key named in ccpk connects, and the node is up');

  // Another process takes the organization over: it loads the session, and the key bound to it, from the store.
  const b = await a.beside();
  await a.running.system.releaseOrg('default');
  t.equal(await b.running.system.adoptOrg('default'), true, 'the other process adopts the organization');
  const refusedOnB = refused(b);
  const heardOnB = b.running.hub.status().heartbeats;
  real.moveTo(b);
  await poll('the other process to read the node', () =>
    b.running.hub.status().heartbeats >= heardOnB + FAST.online_threshold + 1 ? true : undefined,
  );
  t.equal(refused(b), refusedOnB, 'it admitted the key the session record names');
  await poll('the node up on the other process', async () => ((await stateOf(b)).status === 'up' ? true : undefined));
});

t.test('a node that connects a moment before its session names its Curve key is admitted once it does', async (t) => {
  const s = await startTestServer(t, 'file', FAST);
  const node = await registerNode(s.admin, s.url, 'early');
  // A new process of the node's client: a Curve key of its own, not named yet. It connects at once, as a node does
  // right after its owner answered the config request its gateway has not heard of yet.
  const curve = curveKeyPair();
  const early = new TestNode(s, 'early', 'default', node.sessionKey, node.config, {}, node.clientKeyPem, false, curve);
  t.teardown(() => early.stop());
  early.resumeHeartbeats();
  const { connections } = s.running.hub.status();
  await poll('its handshake to reach the server', () => {
    const now = s.running.hub.status().connections;
    return now.held > 0 || now.refused.curve_key_unknown > connections.refused.curve_key_unknown ? true : undefined;
  });
  const asNode = s.as('early', node.clientKeyPem);
  const path = `/organizations/default/pushy/config/early?ccpk=${encodeURIComponent(curve.publicKey)}`;
  t.equal((await asNode.request('GET', path)).status, 200, 'its config request names the key, a moment later');
  await early.ready();
  const stateOf = async () =>
    (await s.admin.request('GET', '/organizations/default/pushy/node_states/early')).body as { status: string };
  t.equal((await stateOf()).status, 'up', 'the held handshake was admitted: the node is up');
  t.equal(s.running.hub.status().connections.refused.curve_key_unknown, 0, 'nothing was refused');
});

t.test('with curve_encryption false nothing changes: no ccpk is asked for, and no key is checked', async (t) => {
  const s = await startTestServer(t, 'file', { ...FAST, curve_encryption: false });
  const pair = await keyPair(0);
  await s.admin.request('POST', '/organizations/default/clients', { name: 'plain', public_key: pair.publicKeyPem });
  await s.admin.request('POST', '/organizations/default/nodes', { name: 'plain' });
  const res = await s.as('plain', pair.privateKeyPem).request('GET', '/organizations/default/pushy/config/plain');
  t.equal(res.status, 200, 'a config request without ccpk is answered');
  t.equal((res.body as { curve_public_key: unknown }).curve_public_key, null, 'and names no Curve key');
  const node = await startTestNode(s, 'plain-node');
  t.teardown(() => node.stop());
  t.same(
    s.running.hub.status().connections.refused,
    {
      curve_key_unknown: 0,
      curve_key_expired: 0,
      handshake_timeout: 0,
      handshake_failed: 0,
    },
    'a node connects unencrypted, and nothing is refused',
  );
});
