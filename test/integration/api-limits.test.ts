// Limits on hostile input over real HTTP: deep JSON, long names, oversized jobs, unknown methods and silent
// connections each get a clear answer, and nothing of a refused request is stored.
import { connect } from 'node:net';
import t from 'tap';
import { startTestServer } from '../support/server.js';

const ORG = '/organizations/default';

/** A node whose attributes nest `levels` objects deep, written out as JSON (stringify would recurse as deep). */
const deepNode = (name: string, levels: number) =>
  Buffer.from(`{"name":"${name}","normal":${'{"a":'.repeat(levels)}{}${'}'.repeat(levels)}}`);

t.test('bodies nested deeper than max_json_depth are refused before anything is stored', async (t) => {
  const s = await startTestServer(t, 'file');
  const deep = await s.admin.request('POST', `${ORG}/nodes`, deepNode('deep', 5000));
  t.same([deep.status, deep.body], [400, { error: ['JSON nests deeper than 100 levels'] }]);
  t.equal((await s.admin.request('GET', `${ORG}/nodes/deep`)).status, 404, 'the node was not created');
  // The node object is level 1 and `normal` level 2: 98 more levels reach the limit exactly.
  t.equal((await s.admin.request('POST', `${ORG}/nodes`, deepNode('at-limit', 98))).status, 201);
  t.equal((await s.admin.request('POST', `${ORG}/nodes`, deepNode('past-limit', 99))).status, 400);
  // Brackets inside strings are text, not nesting.
  const text = await s.admin.request('POST', `${ORG}/nodes`, { name: 'text', normal: { s: '['.repeat(500) } });
  t.equal(text.status, 201, 'brackets inside a string do not count');
});

t.test('names longer than max_name_length are refused', async (t) => {
  const s = await startTestServer(t, 'file');
  const long = await s.admin.request('POST', `${ORG}/nodes`, { name: 'n'.repeat(10_000) });
  t.same([long.status, long.body], [400, { error: ["Field 'name' is longer than 255 characters"] }]);
  t.equal((await s.admin.request('POST', `${ORG}/nodes`, { name: 'n'.repeat(255) })).status, 201);
  const client = await s.admin.request('POST', `${ORG}/clients`, { name: 'c'.repeat(256) });
  t.equal(client.status, 400, 'a client name too');
  const nodes = await s.admin.request('GET', `${ORG}/nodes`);
  t.same(Object.keys(nodes.body as object), ['n'.repeat(255)], 'only the node within the limit exists');
});

t.test('jobs over max_job_nodes or max_command_length are refused', async (t) => {
  const s = await startTestServer(t, 'file', { max_job_nodes: 3, max_command_length: 12 });
  const many = await s.admin.request('POST', `${ORG}/pushy/jobs`, {
    command: 'chef-client',
    nodes: ['a', 'b', 'c', 'd'],
  });
  t.same([many.status, many.body], [400, { error: ["Field 'nodes' names more than 3 nodes"] }]);
  const long = await s.admin.request('POST', `${ORG}/pushy/jobs`, { command: 'x'.repeat(13), nodes: ['a'] });
  t.same([long.status, long.body], [400, { error: ["Field 'command' is longer than 12 characters"] }]);
  const jobs = await s.admin.request('GET', `${ORG}/pushy/jobs`);
  t.same(jobs.body, [], 'no job was created');
  const fits = await s.admin.request('POST', `${ORG}/pushy/jobs`, { command: 'chef-client', nodes: ['a', 'b', 'c'] });
  t.equal(fits.status, 201, 'a job within both limits starts');
});

/**
 * Sends raw bytes on a new connection and collects everything until the server closes it; fails, naming what it
 * waited for, if the server keeps it open past `timeoutMs`.
 */
function rawExchange(url: string, bytes: string, timeoutMs = 30_000): Promise<{ text: string; ended: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server did not close the connection within ${timeoutMs} ms`));
    }, timeoutMs);
    let text = '';
    let ended = false;
    socket.on('data', (d) => (text += d.toString()));
    // The server's FIN: it closed the connection, rather than the connection failing.
    socket.on('end', () => (ended = true));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, ended });
    });
  });
}

t.test('an unknown method gets 405 with a JSON error', async (t) => {
  const s = await startTestServer(t, 'file');
  const { text } = await rawExchange(s.url, `FROB ${ORG}/nodes HTTP/1.1\r\nHost: x\r\n\r\n`);
  t.match(text, /^HTTP\/1\.1 405 /);
  t.match(text, /Content-Type: application\/json/);
  t.ok(text.endsWith('{"error":["method not allowed"]}'), text);
  const patch = await s.admin.request('PATCH', `${ORG}/nodes`, {});
  t.equal(patch.status, 405, 'a known method a path does not serve is 405 too');
});

t.test('a connection that stays silent past idle_timeout is closed', async (t) => {
  const s = await startTestServer(t, 'file', { idle_timeout: 1 });
  const { text, ended } = await rawExchange(s.url, '');
  t.equal(text, '', 'nothing is answered to nothing');
  t.ok(ended, 'the server closed the connection');
});
