// Moves a store written by an earlier version (keys without partition hash tags) into the current layout, once,
// before the first server of this version reads it. The copy is made before any old key is deleted, and copying
// again overwrites with the same values, so a migration cut short is simply run again at the next start.
import { setTimeout as sleep } from 'node:timers/promises';
import { collectionKey, fieldMapsKey, fieldsKey, layoutKey, LEGACY, markerKey, partitionPrefix } from './layout.js';
import { registryKey } from './layout.js';
import { partitionOfDoc } from './partitions.js';
import type { RedisClient } from './redis-scripts.js';

export const LAYOUT_VERSION = '2';
/** Another process migrating holds this lock; a migration that crashed frees it after this long. */
const LOCK_MS = 60_000;
const WAIT_STEP_MS = 100;
const CHUNK = 1000;

/** Returns once the keys under `prefix` are in the current layout; `log` hears what was moved. */
export async function migrateLayout(
  redis: RedisClient,
  prefix: string,
  log: (line: string) => void = () => undefined,
): Promise<void> {
  const layout = layoutKey(prefix);
  if ((await redis.get(layout)) === LAYOUT_VERSION) return;
  // One key a command: in a Redis Cluster keys of several slots cannot share one.
  const legacy = (await redis.exists(LEGACY.registry(prefix))) > 0 || (await redis.exists(LEGACY.marker(prefix))) > 0;
  if (!legacy) {
    await redis.set(layout, LAYOUT_VERSION);
    return;
  }
  const lock = `${partitionPrefix(prefix, 'global')}migrating`;
  if ((await redis.set(lock, String(process.pid), 'PX', LOCK_MS, 'NX')) !== 'OK') {
    // Another process is moving the keys: wait for it (or for its lock to run out, and take over).
    const until = Date.now() + LOCK_MS + 5000;
    while ((await redis.get(layout)) !== LAYOUT_VERSION) {
      if (Date.now() > until) throw new Error(`the store under ${prefix} is still being migrated by another process`);
      await sleep(WAIT_STEP_MS);
      if ((await redis.exists(lock)) === 0) return migrateLayout(redis, prefix, log);
    }
    return;
  }
  const names = await redis.smembers(LEGACY.registry(prefix));
  const old: string[] = [];
  let docs = 0;
  for (const name of names) {
    const key = LEGACY.collection(prefix, name);
    old.push(key, LEGACY.fieldMaps(prefix, name));
    for (const [id, json] of Object.entries(await redis.hgetall(key))) {
      const p = partitionOfDoc(name, id);
      await redis.sadd(registryKey(prefix, p), name);
      await redis.hset(collectionKey(prefix, p, name), id, json);
      docs += 1;
    }
    for (const id of await redis.smembers(LEGACY.fieldMaps(prefix, name))) {
      const p = partitionOfDoc(name, id);
      const from = LEGACY.fields(prefix, name, id);
      old.push(from);
      const entries = Object.entries(await redis.hgetall(from));
      await redis.sadd(registryKey(prefix, p), name);
      await redis.sadd(fieldMapsKey(prefix, p, name), id);
      for (let i = 0; i < entries.length; i += CHUNK)
        await redis.hset(fieldsKey(prefix, p, name, id), Object.fromEntries(entries.slice(i, i + CHUNK)));
    }
  }
  if ((await redis.exists(LEGACY.marker(prefix))) > 0) await redis.set(markerKey(prefix), 'written by infra-server');
  old.push(LEGACY.registry(prefix), LEGACY.marker(prefix));
  // One key a command: in a Redis Cluster a DEL of several keys must keep to one slot.
  for (const key of old) await redis.del(key);
  await redis.set(layout, LAYOUT_VERSION);
  await redis.del(lock);
  log(`moved ${names.length} collections (${docs} documents) under ${prefix} to the partitioned key layout`);
}
