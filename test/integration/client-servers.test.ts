// The node client's requests when several servers may answer, over real HTTP: a server that refuses connections
// and one that answers 503 are passed over for one that answers, which is then kept; a refusal every server would
// make does not move the client.
import { createServer, type Server } from 'node:http';
import t from 'tap';
import type { Logger } from '../../src/client/logger.js';
import { ServerApi, Servers } from '../../src/client/server-api.js';
import { freePort } from '../support/server-process.js';
import { startTestServer } from '../support/server.js';

function capturingLogger(lines: string[]): Logger {
  const keep = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  return { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}

/** A real HTTP server that answers every request 503, as a member whose store is away does. */
async function busyServer(t: Tap): Promise<string> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
    res.end(JSON.stringify({ error: ['The data store is unavailable. Try again.'] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
}
type Tap = Parameters<Parameters<typeof t.test>[0]>[0];

t.test('requests move past servers that do not answer or answer 503, and stay where one answers', async (t) => {
  const s = await startTestServer(t, 'file');
  const dead = `http://127.0.0.1:${await freePort()}`;
  const busy = await busyServer(t);
  const lines: string[] = [];
  const servers = new Servers([dead, busy, s.url], capturingLogger(lines));
  const identity = { userId: 'admin', key: await s.keyOf('admin') };
  const everyServer = new ServerApi(servers, 'default', identity, 5000).trying(Infinity);

  const listed = await everyServer.request('GET', '/nodes');
  t.equal(listed.status, 200, 'the third server answers');
  t.equal(servers.current, s.url, 'and is kept');
  t.match(
    lines[0],
    new RegExp(`^warn ${dead}: GET /nodes: .*ECONNREFUSED.*; asking ${busy} from now on$`),
    'the log says why it left the first',
  );
  t.match(lines[1], new RegExp(`^warn ${busy}: GET /nodes: 503; asking ${s.url} from now on$`), 'and the second');

  const missing = await everyServer.request('GET', '/nodes/nowhere');
  t.equal(missing.status, 404, 'a 404 is the answer');
  t.equal(servers.current, s.url, 'and moves the client nowhere: every member would say the same');
  t.equal(lines.length, 2, 'nor says anything');
});

t.test(
  'one try per request: a failure moves the pool for the next request, which the next server answers',
  async (t) => {
    const s = await startTestServer(t, 'file');
    const dead = `http://127.0.0.1:${await freePort()}`;
    const servers = new Servers([dead, s.url], capturingLogger([]));
    const api = new ServerApi(servers, 'default', { userId: 'admin', key: await s.keyOf('admin') }, 5000);
    await t.rejects(api.request('GET', '/nodes'), { name: 'ApiNetworkError' }, 'the dead server fails the request');
    t.equal(servers.current, s.url);
    t.equal((await api.request('GET', '/nodes')).status, 200, 'the next request goes to the next server');
    servers.failed(dead, 'a late failure of a server the client already left');
    t.equal(servers.current, s.url, 'changes nothing');
  },
);
