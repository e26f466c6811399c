// A tiny TCP round-robin proxy in front of the members' API ports, standing in for the haproxy the README's layout
// puts there: each new connection goes to the next member, and a member that refuses the connection is skipped. It
// checks no health, as a plain `balance roundrobin` does not: a frozen member takes connections it never answers,
// and the clients' timeouts are what move them on.
import net from 'node:net';
import type { TeardownScope } from '../teardown-scope.js';

export interface Balancer {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** Connections passed on, by the upstream port that took them. */
  passed(): Record<number, number>;
  close(): Promise<void>;
}

/** Listens on a free loopback port; `upstreams()` is read at each connection, so members may come and go. */
export async function startBalancer(scope: TeardownScope, upstreams: () => readonly number[]): Promise<Balancer> {
  const sockets = new Set<net.Socket>();
  const passed: Record<number, number> = {};
  let next = 0;
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };
  /** Tries the upstreams from the next in turn; the client is closed once every one refused. */
  const connect = (client: net.Socket, ports: readonly number[], tried: number) => {
    if (tried >= ports.length || client.destroyed) return void client.destroy();
    const port = ports[next++ % ports.length] as number;
    const upstream = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    track(upstream);
    const refused = () => connect(client, ports, tried + 1);
    upstream.once('error', refused);
    upstream.once('connect', () => {
      upstream.off('error', refused);
      passed[port] = (passed[port] ?? 0) + 1;
      // Either side's end or error ends both: a member killed mid-answer cuts the client's connection, as it would.
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.pipe(client);
      client.pipe(upstream);
      upstream.once('close', () => client.destroy());
      client.once('close', () => upstream.destroy());
    });
  };
  // Half-open both ways: a side that finished sending still gets its answer; pipe() passes each end on.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    track(client);
    client.pause(); // what the client sends first waits in its buffer until an upstream takes it
    client.on('error', () => undefined);
    connect(client, upstreams(), 0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  scope.teardown(close);
  return { url: `http://127.0.0.1:${port}`, passed: () => ({ ...passed }), close };
}
