// The metrics listener: GET /metrics in the Prometheus text format on a port of its own (metrics_port), apart
// from the public API, so it can stay on a private address and needs no signed requests.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '../lib/logger.js';
import { messageOf } from '../lib/thrown.js';

export interface MetricsListener {
  /** `http://host:port/metrics`. */
  url: string;
  close(): Promise<void>;
}

export async function listenForMetrics(
  registry: Registry,
  at: { port: number; host: string },
  log: Logger,
): Promise<MetricsListener> {
  const server = createServer((req, res) => void answer(registry, req, res, log));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((e: unknown) => {
    const why = messageOf(e);
    throw new Error(`cannot listen for metrics on ${at.host}:${at.port}: ${why}`, { cause: e });
  });
  const { port } = server.address() as AddressInfo;
  const host = at.host === '0.0.0.0' || at.host === '::' ? '127.0.0.1' : at.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(registry: Registry, req: IncomingMessage, res: ServerResponse, log: Logger): Promise<void> {
  const path = (req.url ?? '').split('?')[0];
  if (path !== '/metrics') return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return void res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }).end('method not allowed\n');
  try {
    const text = await registry.metrics();
    res.writeHead(200, { 'Content-Type': registry.contentType });
    res.end(req.method === 'HEAD' ? undefined : text);
  } catch (e) {
    log.error('collecting metrics failed', { error: e });
    res.writeHead(500, { 'Content-Type': 'text/plain' }).end('collecting metrics failed\n');
  }
}
