// The signed API client over real HTTP: the headers it sends for each request, as a server records them, verify
// for that request, including those of a bodiless request made again within its second, which the client signs
// once and sends again; an answer measured without being kept is counted whole; and a kept connection reset as a
// request goes out costs an idempotent request nothing; a gzipped answer is unpacked, a broken one refused; a
// request with no answer is given up at the client's timeout, on a manual clock.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { ApiClient } from '../../src/auth/api-client.js';
import { generateKeyPair, parsePublicKey } from '../../src/auth/rsa-keys.js';
import { readAuthHeaders, verifyRequest } from '../../src/auth/signed-headers.js';
import { isoSeconds } from '../../src/lib/dates.js';
import { until } from '../support/deadline.js';
import { ManualClock } from '../support/manual-clock.js';

const BIG = 300_000;

interface Received {
  method: string;
  path: string;
  body: string;
  headers: IncomingHttpHeaders;
}

t.test('every request carries headers that verify for it, repeated or not', async (t) => {
  const pair = await generateKeyPair();
  const publicKey = parsePublicKey(pair.publicKeyPem);
  if (publicKey === null) throw new Error('no public key');
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      received.push({
        method: req.method ?? '',
        path,
        body: Buffer.concat(chunks).toString('utf8'),
        headers: req.headers,
      });
      res.setHeader('Content-Type', 'application/json');
      // A large answer arrives in several chunks.
      res.end(path === '/big' ? JSON.stringify({ data: 'x'.repeat(BIG - '{"data":""}'.length) }) : '{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const { port } = server.address() as AddressInfo;
  const api = new ApiClient({ baseUrl: `http://127.0.0.1:${port}`, userId: 'admin', key: pair.privateKeyPem });

  /** Verifies what the server received as the request it was, the way the server's authentication does. */
  const verified = (r: Received): boolean => {
    const read = readAuthHeaders((name) => r.headers[name] as string | undefined, Date.now(), 900);
    return read.ok && verifyRequest(read.auth, [publicKey], r.method, r.path, r.body) === 0;
  };
  const signature = (r: Received | undefined) =>
    Object.keys(r?.headers ?? {})
      .filter((h) => h.startsWith('x-ops-authorization-'))
      .sort()
      .map((h) => r?.headers[h])
      .join('');

  // Requests that fall within one second: tried again should the second turn over among them.
  let batch: Received[] = [];
  for (let attempt = 0; attempt < 5 && batch.length === 0; attempt++) {
    const second = isoSeconds(Date.now());
    const from = received.length;
    await api.send('GET', '/organizations/default/pushy/jobs/a');
    await api.send('GET', '/organizations/default/pushy/jobs/a?ignored=1');
    await api.send('GET', '/organizations/default/pushy/jobs/b');
    await api.send('DELETE', '/organizations/default/pushy/jobs/a');
    await api.send('POST', '/organizations/default/pushy/jobs', { command: 'x', nodes: ['n1'] });
    await api.send('POST', '/organizations/default/pushy/jobs', { command: 'y', nodes: ['n1'] });
    if (isoSeconds(Date.now()) === second) batch = received.slice(from);
  }
  t.equal(batch.length, 6, 'six requests within one second');
  for (const r of batch) t.ok(verified(r), `${r.method} ${r.path} ${r.body} verifies`);
  const [getA, getAAgain, getB, deleteA, postX, postY] = batch;
  t.equal(signature(getAAgain), signature(getA), 'the same GET in the same second is signed the same');
  t.not(signature(getB), signature(getA), 'another path has its own signature');
  t.not(signature(deleteA), signature(getA), 'another method has its own signature');
  t.not(signature(postY), signature(postX), 'another body has its own signature');

  // The next second: a new timestamp, never the one kept for the last second.
  const before = getA?.headers['x-ops-timestamp'];
  await until('the next second', () => (isoSeconds(Date.now()) !== before ? true : undefined), 5000, 20);
  await api.send('GET', '/organizations/default/pushy/jobs/a');
  const later = received.at(-1);
  t.not(later?.headers['x-ops-timestamp'], before, 'a later second has its own timestamp');
  t.ok(later !== undefined && verified(later), 'and its headers verify');

  const measured = await api.measure('GET', '/big');
  t.match(measured, { status: 200, size: BIG }, 'a measured answer is counted whole, not kept');
  t.equal(measured.headers.get('content-type'), 'application/json');
  const asked = received.at(-1);
  t.ok(asked?.path === '/big' && verified(asked), 'and its request is signed as any other');
});

t.test(
  'a kept connection the server drops as the next request goes out: a GET is sent again, a POST is not',
  async (t) => {
    const pair = await generateKeyPair();
    const seen: string[] = [];
    const connections = new Set<unknown>();
    // Each connection answers its first request and resets at its second, as a server closing it for idleness
    // at that moment would: the request is never read, and no answer comes.
    const server = createServer((req, res) => {
      const socket = req.socket as typeof req.socket & { answered?: boolean };
      connections.add(socket);
      if (socket.answered === true) {
        socket.resetAndDestroy();
        return;
      }
      socket.answered = true;
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      res.setHeader('Content-Type', 'application/json');
      res.end('{"ok":true}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.teardown(() => server.close());
    const { port } = server.address() as AddressInfo;
    const api = new ApiClient({ baseUrl: `http://127.0.0.1:${port}`, userId: 'admin', key: pair.privateKeyPem });

    t.equal((await api.request('GET', '/first')).status, 200);
    const again = await api.request('GET', '/second');
    t.equal(again.status, 200, 'the GET was answered on a new connection');
    t.same(again.body, { ok: true });
    t.same(seen, ['GET /first', 'GET /second'], 'each GET was handled once');
    t.equal(connections.size, 2);

    // Several kept connections, all closed at once: the GET sent again does not take another of them.
    await Promise.all([api.request('GET', '/a'), api.request('GET', '/b'), api.request('GET', '/c')]);
    const third = await api.request('GET', '/after-several');
    t.equal(third.status, 200, 'answered though every kept connection was dropped');
    t.equal(seen.filter((s) => s === 'GET /after-several').length, 1);

    // Two of those three are still kept.
    const before = seen.length;
    await t.rejects(api.request('POST', '/jobs', { command: 'x' }), { name: 'ApiNetworkError' }, 'the POST fails');
    t.equal(seen.length, before, 'and was not sent again');
  },
);

t.test('a gzipped answer is unpacked, and one that does not unpack is a clear error', async (t) => {
  const pair = await generateKeyPair();
  const json = JSON.stringify({ nodes: Array.from({ length: 1000 }, (_, i) => `node-${i}`) });
  let acceptEncoding: string | undefined;
  const server = createServer((req, res) => {
    acceptEncoding = req.headers['accept-encoding'];
    const body = req.url === '/broken' ? Buffer.from('not gzip at all') : gzipSync(json);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }).end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const api = new ApiClient({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    userId: 'admin',
    key: pair.privateKeyPem,
  });

  const good = await api.request('GET', '/good');
  t.equal(acceptEncoding, 'gzip', 'the client asks for gzip');
  t.same(good.body, JSON.parse(json), 'and reads the answer unpacked');
  await t.rejects(api.request('GET', '/broken'), { name: 'ApiNetworkError', message: /gzipped answer did not unpack/ });
});

t.test('a request with no answer is given up at the timeout, not before', async (t) => {
  const pair = await generateKeyPair();
  // Takes the request and never answers it.
  const server = createServer(() => undefined);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const clock = new ManualClock();
  const api = new ApiClient({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    userId: 'admin',
    key: pair.privateKeyPem,
    timeoutMs: 10_000,
    timers: clock,
  });
  let outcome: unknown = 'pending';
  const asked = api.request('GET', '/slow').then(
    () => (outcome = 'answered'),
    (e: unknown) => (outcome = e),
  );
  await clock.advance(9999);
  t.equal(outcome, 'pending', 'still waited for just before the timeout');
  await clock.advance(1);
  await asked;
  t.match(outcome, { name: 'TimeoutError', message: 'GET /slow: no answer within 10000 ms' }, 'given up at it');
});
