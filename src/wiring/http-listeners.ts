// The server's HTTP listeners: bound with the limits that keep slow or idle clients from holding connections, and
// answering in JSON what Node's parser refuses before any route sees it.
import { createAdaptorServer, type Http2Bindings, type HttpBindings, type ServerType } from '@hono/node-server';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ServerConfig } from '../config/server-config.js';
import type { ConnectionBudget } from '../http/connection-budget.js';

/** `env` carries Node's own request and response (@hono/node-server), which the routes read headers from. */
export type Fetch = (req: Request, env: HttpBindings | Http2Bindings) => Response | Promise<Response>;

/**
 * `exclusive`: a port of this process's own, even in a member of `processes N` (which share api_port); it takes the
 * requests the other members pass on, so max_connections_per_address does not apply there.
 */
export function listen(
  fetch: Fetch,
  config: ServerConfig,
  budget: ConnectionBudget,
  exclusive = false,
): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = createAdaptorServer({
      fetch,
      // A client that sends its headers or its request a byte at a time holds a connection, an open file, for as
      // long as it likes unless these stop it; Node looks for such connections every connectionsCheckingInterval.
      serverOptions: {
        headersTimeout: config.header_timeout * 1000,
        requestTimeout: config.request_timeout * 1000,
        connectionsCheckingInterval: Math.min(1000, config.header_timeout * 500),
      },
    });
    budget.guard(server as HttpServer, !exclusive);
    server.listen({ port: config.api_port, host: config.api_listen_address, exclusive }, () => resolve(server));
    server.once('error', reject);
    // A connection that sends nothing for idle_timeout is closed, whether or not it ever sent a request.
    const http1 = server as HttpServer;
    http1.setTimeout(config.idle_timeout * 1000);
    http1.on('timeout', (socket: Socket) => socket.destroy());
    server.on('clientError', (err: Error & { code?: string }, socket: Duplex) =>
      answerClientError(err, socket, budget),
    );
  });
}

/**
 * Requests Node's parser refuses before any route sees them. An unknown method gets 405 with a JSON error, like
 * a known method no route takes; one past header_timeout or request_timeout gets 408; anything else malformed
 * gets 400, also in JSON.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex, budget: ConnectionBudget): void {
  const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? budget.timedOut(socket as Socket) : undefined;
  if (!socket.writable) return void socket.destroy();
  const [code, reason, message] =
    err.code === 'HPE_INVALID_METHOD'
      ? [405, 'Method Not Allowed', 'method not allowed']
      : timedOut !== undefined
        ? [408, 'Request Timeout', `the request took longer than ${timedOut} allows`]
        : [400, 'Bad Request', 'malformed HTTP request'];
  const body = JSON.stringify({ error: [message] });
  socket.end(
    `HTTP/1.1 ${code} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The URL clients use: a wildcard address is reached on loopback, or on `wildcardHost` when given. */
export function urlOf(http: ServerType, listenAddress: string, wildcardHost = '127.0.0.1'): string {
  const port = (http.address() as AddressInfo).port;
  const host = listenAddress === '0.0.0.0' || listenAddress === '::' ? wildcardHost : listenAddress;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export function closeHttp(http: ServerType): Promise<void> {
  return new Promise((resolve) => http.close(() => resolve()));
}
