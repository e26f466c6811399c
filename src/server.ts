// Assembles one server process from its configuration: store, actor tree, first-start setup, HTTP API.
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { ServerConfig } from './config/server-config.js';
import { createApp } from './http/app.js';
import { firstStart } from './setup/first-start.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/store.js';
import { PushHub } from './transport/push-hub.js';
import { startSystem, type InfraSystem } from '../actors/system.js';

export interface RunningServer {
  /** `http://host:port` of the API. */
  url: string;
  system: InfraSystem;
  hub: PushHub;
  /** Files the first start wrote (empty on later starts). */
  setupFiles: string[];
  close(): Promise<void>;
}

/** `store` replaces the configured one (tests give each run its own Redis key prefix). */
export async function startServer(config: ServerConfig, opts: { store?: Store } = {}): Promise<RunningServer> {
  const storeConfig: { redis_url?: string; data_dir: string } = { data_dir: config.data_dir };
  if (config.redis_url !== undefined) storeConfig.redis_url = config.redis_url;
  const store = opts.store ?? (await openStore(storeConfig));
  const hub = new PushHub(config, store);
  try {
    await hub.bind();
  } catch (e) {
    hub.close();
    await store.close();
    throw new Error(`cannot bind the push-jobs ports ${config.server_heartbeat_port} and ${config.command_port}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  const system = await startSystem(store, hub);
  await hub.attach(system);
  const app = createApp({ system, authSkewSeconds: config.auth_skew, push: hub });
  const http = await listen(app.fetch, config.api_port, config.api_listen_address);
  const port = (http.address() as AddressInfo).port;
  const host = config.api_listen_address === '0.0.0.0' || config.api_listen_address === '::' ? '127.0.0.1' : config.api_listen_address;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  try {
    const setupFiles = await firstStart({ system, dataDir: config.data_dir, orgName: config.default_orgname, apiUrl: url });
    return {
      url, system, hub, setupFiles,
      close: async () => {
        await new Promise<void>((resolve) => http.close(() => resolve()));
        hub.close();
        await system.stop();
      },
    };
  } catch (e) {
    http.close();
    hub.close();
    await system.stop();
    throw e;
  }
}

function listen(fetch: (req: Request) => Response | Promise<Response>, port: number, hostname: string): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, port, hostname }, () => resolve(server));
    server.once('error', reject);
  });
}
