// Picks the store a server runs on: Redis when a URL is configured, files under the data directory otherwise.
import { join } from 'node:path';
import { FileStore } from './file-store.js';
import { RedisStore } from './redis-store.js';
import type { Store } from './store.js';

/** Rejects when Redis does not answer in time or the data directory cannot be written. */
export async function openStore(config: { redis_url?: string; data_dir: string }): Promise<Store> {
  if (config.redis_url) return RedisStore.connect(config.redis_url);
  const store = new FileStore(join(config.data_dir, 'store'));
  if ((await store.state()) !== 'ok') {
    throw new Error(`data directory ${store.root} cannot be created or written`);
  }
  return store;
}
