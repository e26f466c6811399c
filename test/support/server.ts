// Starts a real server in this process for integration tests: a real HTTP port, a file store in a fresh
// folder or Redis under a fresh key prefix, and signed clients for the accounts the first start creates. Others
// can start beside it on the same Redis, as the processes of a cluster do.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { Test } from 'tap';
import { ApiClient } from '../../src/auth/api-client.js';
import { serverConfigSchema, type ServerConfig } from '../../src/config/server-config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { FileStore } from '../../src/store/file-store.js';
import { RedisStore } from '../../src/store/redis-store.js';
import type { Store } from '../../src/store/store.js';
import type { Logger } from '../../src/lib/logger.js';
import { quietLogger } from './logs.js';
import { testRedisUrl, uniquePrefix } from './redis.js';

export type StoreKind = 'file' | 'redis';
export const STORE_KINDS: readonly StoreKind[] = ['file', 'redis'];

export interface TestServer {
  url: string;
  dataDir: string;
  running: RunningServer;
  /** pivotal, the superuser. */
  pivotal: ApiClient;
  /** admin, in the default organization's admins group. */
  admin: ApiClient;
  /** A client signing as `userId` with `keyPem`. */
  as(userId: string, keyPem: string, opts?: { apiVersion?: number }): ApiClient;
  keyOf(name: 'pivotal' | 'admin' | 'default-validator'): Promise<string>;
  /** Stops this server and starts another on the same store; this object must not be used afterwards. */
  restart(): Promise<TestServer>;
  /**
   * Starts another server in this process on this one's store, serving the stored organizations named in `adopt`
   * from the start (default: none), for tests that move organizations by hand. On Redis the two servers are members
   * of one cluster and share the partitions themselves. Stopped at teardown; not restartable.
   */
  beside(adopt?: readonly string[]): Promise<TestServer>;
}

/** What a test changes in the server it starts, beyond its settings and logger. */
export interface TestServerHooks {
  /** Wraps each store a server is given (at every start), to watch its operations or hold them up. */
  store?: (store: Store) => Store;
}

/** A server's settings for a test: its files under `dataDir`, port 0 everywhere (the system picks free ports, so
 * test files run side by side), on the loopback. */
export function testServerConfig(dataDir: string, overrides: Partial<ServerConfig> = {}): ServerConfig {
  return {
    ...serverConfigSchema.parse({}),
    api_port: 0,
    api_listen_address: '127.0.0.1',
    data_dir: dataDir,
    server_heartbeat_port: 0,
    command_port: 0,
    queue_listen_address: 'tcp://127.0.0.1',
    server_name: '127.0.0.1',
    ...overrides,
  };
}

export async function startTestServer(
  t: Test,
  kind: StoreKind,
  overrides: Partial<ServerConfig> = {},
  logger: Logger = quietLogger(),
  hooks: TestServerHooks = {},
): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'infra-test-'));
  const prefix = uniquePrefix();
  // `redis_url` among the overrides names the Redis to use (a private one a test stops and starts).
  const redisUrl = kind === 'redis' ? (overrides.redis_url ?? (await testRedisUrl())) : undefined;
  const config = testServerConfig(dataDir, overrides);
  const openStore = async (): Promise<Store> => {
    const store = redisUrl ? await RedisStore.connect(redisUrl, prefix) : new FileStore(join(dataDir, 'store'));
    return hooks.store ? hooks.store(store) : store;
  };

  let current: RunningServer | undefined;
  const others: RunningServer[] = [];
  t.teardown(async () => {
    for (const other of others) await other.close();
    await current?.close();
    await rm(dataDir, { recursive: true, force: true });
    if (redisUrl) {
      const redis = new Redis(redisUrl);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  /** `adopt`: the organizations a server beside the first serves; undefined for the first server itself. */
  const boot = async (adopt?: readonly string[]): Promise<TestServer> => {
    const running = await startServer(config, { store: await openStore(), logger, adopt: adopt ?? 'all' });
    if (adopt === undefined) current = running;
    else others.push(running);
    const keyOf = (name: string) => readFile(join(dataDir, `${name}.pem`), 'utf8');
    const as = (userId: string, keyPem: string, opts: { apiVersion?: number } = {}) =>
      new ApiClient({ baseUrl: running.url, userId, key: keyPem, ...opts });
    return {
      url: running.url,
      dataDir,
      running,
      as,
      keyOf,
      pivotal: as('pivotal', await keyOf('pivotal')),
      admin: as('admin', await keyOf('admin')),
      restart: async () => {
        if (adopt !== undefined) throw new Error('a server beside another is not restarted');
        await running.close();
        current = undefined;
        return boot();
      },
      beside: (names: readonly string[] = []) => boot(names),
    };
  };
  return boot();
}
