// Picks the store a server runs on: Redis when a URL is configured, files under the data directory otherwise.
import { join } from 'node:path';
import { FileStore } from './file-store.js';
import { isSentinelUrl } from './redis-connection.js';
import { RedisStore } from './redis-store.js';
import type { Store } from './store.js';

export interface StoreConfig {
  redis_url?: string;
  /** Unset: 1 through Sentinel (a failover must not lose what was answered), else 0. */
  redis_min_replicas?: number;
  data_dir: string;
  /** Seconds an operation may take: a write waits for its replicas half of that. */
  store_timeout: number;
}

/** Rejects when Redis does not answer in time or the data directory cannot be written. */
export async function openStore(config: StoreConfig): Promise<Store> {
  if (config.redis_url) {
    const minReplicas = config.redis_min_replicas ?? (isSentinelUrl(config.redis_url) ? 1 : 0);
    const wait = { minReplicas, timeoutMs: (config.store_timeout * 1000) / 2 };
    return RedisStore.connect(config.redis_url, undefined, undefined, wait);
  }
  const store = new FileStore(join(config.data_dir, 'store'));
  if ((await store.state()) !== 'ok') {
    throw new Error(`data directory ${store.root} cannot be created or written`);
  }
  return store;
}
