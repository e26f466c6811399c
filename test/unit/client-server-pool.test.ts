// Which server a node's client asks: client.rb's first, then the members a config answer listed, moving on only
// when the server in use fails in a way another member may not share.
import t from 'tap';
import {
  asksGateway,
  learnServers,
  moveOn,
  newServerPool,
  normalBaseUrl,
  serversOf,
  worthAnotherServer,
} from '../../src/client/server-pool.js';

const A = 'http://infra-a:10003';
const B = 'http://infra-b:10003';
const C = 'http://infra-c:10003';
/** A "random" that always picks the last place: the shuffle then keeps the order given. */
const keep = () => 0.999;
/** One that always picks the first: the shuffle then rotates the list. */
const first = () => 0;

t.test('a client starts on the first server client.rb names', async (t) => {
  const pool = newServerPool([`${A}/`, B, A]);
  t.equal(pool.current, A);
  t.strictSame(serversOf(pool), [A, B], 'each once, in client.rb’s order');
  t.throws(() => newServerPool([]), RangeError, 'no server at all is a bug of the caller');
});

t.test('the members a config answer lists are tried after client.rb’s, each once', async (t) => {
  const { pool, changed, refused } = learnServers(newServerPool([A]), [A, `${B}/`, C, B], keep);
  t.ok(changed);
  t.strictSame(refused, []);
  t.equal(pool.current, A, 'the server in use stays');
  t.strictSame(serversOf(pool), [A, B, C]);
  t.strictSame(pool.learned, [B, C], 'the configured one is not learned again');
});

t.test('each client has its own order of the members, and keeps it while they stay the same', async (t) => {
  const once = learnServers(newServerPool([A]), [B, C, 'http://infra-d:10003'], first);
  t.strictSame(once.pool.learned, [C, 'http://infra-d:10003', B], 'another draw, another order');
  const again = learnServers(once.pool, [B, 'http://infra-d:10003', C], keep);
  t.notOk(again.changed, 'the same members in another order change nothing');
  t.equal(again.pool, once.pool);
  const fewer = learnServers(once.pool, [B], keep);
  t.ok(fewer.changed, 'a member that left is dropped');
  t.strictSame(serversOf(fewer.pool), [A, B]);
});

t.test('a failure of the server in use moves on, wrapping to client.rb’s first after the last', async (t) => {
  let pool = learnServers(newServerPool([A]), [B, C], keep).pool;
  pool = moveOn(pool, A);
  t.equal(pool.current, B);
  pool = moveOn(pool, B);
  t.equal(pool.current, C);
  pool = moveOn(pool, C);
  t.equal(pool.current, A, 'round again');
});

t.test('two requests failing on the same server move the client once', async (t) => {
  const pool = learnServers(newServerPool([A]), [B, C], keep).pool;
  const moved = moveOn(pool, A);
  t.equal(moveOn(moved, A), moved, 'the second failure is of a server the client already left');
});

t.test('one server alone stays in use whatever fails', async (t) => {
  const pool = newServerPool([A]);
  t.equal(moveOn(pool, A), pool);
});

t.test(
  'a server in use that the answer no longer lists stays until it fails; the client then starts over',
  async (t) => {
    let pool = learnServers(newServerPool([A]), [B, C], keep).pool;
    pool = moveOn(moveOn(pool, A), B);
    t.equal(pool.current, C);
    pool = learnServers(pool, [B], keep).pool;
    t.equal(pool.current, C, 'it answered the config that left it out: it is used while it answers');
    t.equal(moveOn(pool, C).current, A);
  },
);

t.test('a client configured for https only never learns plain http URLs', async (t) => {
  const https = 'https://infra-b.example.com';
  const { pool, refused } = learnServers(newServerPool(['https://infra.example.com']), [B, https, 'ftp://x'], keep);
  t.strictSame(pool.learned, [https]);
  t.strictSame(refused, [B, 'ftp://x']);
  t.strictSame(learnServers(newServerPool([A]), [https], keep).pool.learned, [https], 'an upgrade is fine');
});

t.test('no answer, 408, 429 and 5xx may pass on another member; other refusals are the same everywhere', async (t) => {
  for (const status of [undefined, 408, 429, 500, 502, 503, 504]) t.ok(worthAnotherServer(status), `${status}`);
  for (const status of [200, 201, 400, 401, 403, 404, 409, 413]) t.notOk(worthAnotherServer(status), `${status}`);
});

t.test('base URLs compare by origin and path', async (t) => {
  t.equal(normalBaseUrl('HTTP://Infra-A:10003/'), A);
  t.equal(normalBaseUrl('https://infra:443/push//'), 'https://infra/push');
  t.equal(normalBaseUrl('http://infra/?q=1'), null);
  t.equal(normalBaseUrl('not a url'), null);
});

t.test('a silent gateway moves the pool off the server asked only when that server is the gateway', async (t) => {
  const pool = newServerPool(['http://balancer:10003']);
  t.equal(asksGateway(pool, 'http://a:10003'), false, 'a balancer is not the silent member: it is asked again');
  t.equal(asksGateway(pool, 'http://balancer:10003/'), true, 'the member asked is the gateway');
  t.equal(asksGateway(pool, undefined), true, 'a server that names no gateway: counted as the one asked');
});
