// Small batch buffers over a real CurveZMQ connection: the sizes are applied, and messages shorter and longer
// than the buffers cross whole, in order, both ways.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { curveKeyPair, Dealer, Router } from 'zeromq';
import { batchBuffers, CONNECTION_BATCH_BYTES, shrinkBatchBuffers } from '../../src/transport/batch-buffers.js';

t.test('messages of every size cross a connection with 512-byte batch buffers', async (t) => {
  const server = curveKeyPair();
  const client = curveKeyPair();
  const router = new Router({ linger: 0, curveServer: true, curveSecretKey: server.secretKey });
  t.same(batchBuffers(router), [8192, 8192], 'libzmq starts at 8 KB each way');
  t.ok(shrinkBatchBuffers(router), 'this zeromq build takes the option');
  t.same(batchBuffers(router), [CONNECTION_BATCH_BYTES, CONNECTION_BATCH_BYTES], 'both buffers are resized');
  await router.bind('tcp://127.0.0.1:*');
  const dealer = new Dealer({
    linger: 0,
    curveServerKey: server.publicKey,
    curvePublicKey: client.publicKey,
    curveSecretKey: client.secretKey,
  });
  dealer.connect(router.lastEndpoint ?? '');
  t.teardown(() => {
    router.close();
    dealer.close();
  });

  const sizes = [1, 100, 511, 512, 513, 1500, 8192, 70_000];
  const bodies = sizes.map((n) => randomBytes(n).toString('base64').slice(0, n));
  for (const body of bodies) await dealer.send(['header', body]);
  const identities: Buffer[] = [];
  for (const body of bodies) {
    const [identity, header, got] = await router.receive();
    t.equal(String(header), 'header');
    t.equal(String(got), body, `${body.length} bytes in, whole`);
    identities.push(identity as Buffer);
  }
  for (const [i, body] of bodies.entries()) await router.send([identities[i] as Buffer, 'header', body]);
  for (const body of bodies) {
    const [header, got] = await dealer.receive();
    t.equal(String(header), 'header');
    t.equal(String(got), body, `${body.length} bytes out, whole`);
  }
});
