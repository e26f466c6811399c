// The chaos runner's balancer on real loopback sockets: connections go round the members in turn, a member that
// refuses is skipped, bytes pass both ways, and with every member refusing the client is closed.
import net from 'node:net';
import t from 'tap';
import { startBalancer } from '../support/chaos/balancer.js';
import { freePort } from '../support/server-process.js';
import type { TeardownScope } from '../support/teardown-scope.js';

/** A member that answers each connection with its name, then echoes what it reads. */
async function member(t: TeardownScope, name: string): Promise<number> {
  const server = net.createServer((s) => {
    s.on('error', () => undefined); // a client that went first is its own business
    s.write(`${name}\n`);
    s.pipe(s);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

/** Connects through the balancer, sends `text`, and answers everything read until the connection ends. */
function exchange(url: string, text: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    let read = '';
    const s = net.connect({ host: '127.0.0.1', port: Number(port) }, () => s.end(text));
    s.setEncoding('utf8').on('data', (d: string) => (read += d));
    s.on('error', () => undefined);
    s.once('close', () => resolve(read));
  });
}

t.test('each connection goes to the next member, one that refuses skipped', async (t) => {
  const a = await member(t, 'a');
  const b = await member(t, 'b');
  const closed = await freePort();
  const balancer = await startBalancer(t, () => [a, closed, b]);
  const answers = [];
  for (let i = 0; i < 4; i++) answers.push(await exchange(balancer.url, `hello ${i}`));
  t.same(answers, ['a\nhello 0', 'b\nhello 1', 'a\nhello 2', 'b\nhello 3'], 'a, b, a, b: the closed port skipped');
  t.same(balancer.passed(), { [a]: 2, [b]: 2 });
});

t.test('with every member refusing, the client is closed', async (t) => {
  const balancer = await startBalancer(t, () => []);
  t.equal(await exchange(balancer.url, 'anyone?'), '', 'no member: closed');
  const closed = await freePort();
  const refusing = await startBalancer(t, () => [closed]);
  t.equal(await exchange(refusing.url, 'anyone?'), '', 'every member refused: closed');
});
