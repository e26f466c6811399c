// GET /_status while the server starts: `starting` (503) until restore and first-start setup are done, so a
// script that waits for `pong` finds admin.pem and config.rb; every other path answers 503 meanwhile.
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { serverStatusSchema, type ServerStatusBody } from '../../src/api/status-schema.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { GLOBAL } from '../../src/store/collections.js';
import { FileStore } from '../../src/store/file-store.js';
import type { Store } from '../../src/store/store.js';
import { until } from '../support/deadline.js';
import { recordingLogger } from '../support/logs.js';
import { testServerConfig } from '../support/server.js';

/** A file store that holds first-start setup at its first step (reading the `setup` marker) until released. */
class HeldSetupStore extends FileStore {
  reached = false;
  private release: () => void = () => {};
  private readonly released = new Promise<void>((resolve) => {
    this.release = resolve;
  });

  override async get(collection: string, id: string): Promise<unknown> {
    if (collection === GLOBAL && id === 'setup') {
      this.reached = true;
      await this.released;
    }
    return super.get(collection, id);
  }

  releaseSetup(): void {
    this.release();
  }
}

/**
 * `store` as it is while it starts for `ms` (a file store recovering its journal and starting its threads on a
 * busy machine): every operation waits until then.
 */
function slowToStart(store: Store, ms: number): Store {
  const started = new Promise((resolve) => setTimeout(resolve, ms));
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (property === 'onLost') return value.bind(target);
      return async (...args: unknown[]) => {
        await started;
        return Reflect.apply(value, target, args);
      };
    },
  });
}

async function statusOf(url: string): Promise<{ code: number; body: ServerStatusBody }> {
  const res = await fetch(`${url}/_status`);
  return { code: res.status, body: serverStatusSchema.parse(await res.json()) };
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

t.test('GET /_status says starting until first-start setup is done, then pong', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'infra-test-'));
  const store = new HeldSetupStore(join(dataDir, 'store'));
  const { logger, records } = recordingLogger('debug');
  const config = testServerConfig(dataDir);
  let running: RunningServer | undefined;
  t.teardown(async () => {
    store.releaseSetup();
    await running?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const starting = startServer(config, { store, logger });
  starting.then(
    (r) => {
      running = r;
    },
    () => {},
  );
  await until('first-start setup to begin', () => (store.reached ? true : undefined), 10_000);
  const bound = records.find((r) => typeof r.url === 'string');
  const url = String(bound?.url);

  const early = await statusOf(url);
  t.equal(early.code, 503);
  t.strictSame(early.body, {
    status: 'starting',
    version: early.body.version,
    store: { kind: 'file', state: 'ok' },
    organizations: 0,
    push_jobs: null,
    actors: null,
  });
  const other = await fetch(`${url}/organizations/default`);
  t.equal(other.status, 503);
  t.strictSame(await other.json(), { error: ['The server is starting'] });
  t.notOk(await exists(join(dataDir, 'admin.pem')), 'no admin.pem yet');

  // As a script would: poll until pong, then the files must be there.
  store.releaseSetup();
  const answers: string[] = [];
  const ready = await until(
    'GET /_status to say pong',
    async () => {
      const s = await statusOf(url);
      answers.push(`${s.body.status} ${s.code}`);
      return s.body.status === 'starting' ? undefined : s;
    },
    20_000,
  );
  t.ok(
    answers.slice(0, -1).every((a) => a === 'starting 503'),
    'starting, with 503, is the only other answer',
  );
  t.equal(ready.code, 200);
  t.equal(ready.body.status, 'pong');
  t.equal(ready.body.organizations, 1);
  t.ok(ready.body.push_jobs, 'the transport figures once started');
  t.ok(await exists(join(dataDir, 'admin.pem')), 'admin.pem is written before pong');
  t.ok(await exists(join(dataDir, 'config.rb')), 'config.rb is written before pong');
  running = await starting;
  t.equal(running.url, url, 'the URL bound early is the one the server reports');
});

t.test('a start that fails answers nothing afterwards and releases the port', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'infra-test-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const { logger, records } = recordingLogger('debug');
  // Not a folder a store can be made in: the start fails after the HTTP port is bound.
  const config = testServerConfig(join(dataDir, 'file'));
  await writeFile(join(dataDir, 'file'), 'not a folder');
  await t.rejects(startServer(config, { logger }), /cannot be created or written/);
  const url = String(records.find((r) => typeof r.url === 'string')?.url);
  await t.rejects(fetch(`${url}/_status`), 'the port is closed');
});

t.test('a store slower to start than store_timeout is waited for', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'infra-test-'));
  // The store starts in twice store_timeout; each first-start write then has all of store_timeout, which a busy
  // machine (the suite's other files beside it) needs more than half a second for.
  const startMs = 3000;
  const store = slowToStart(new FileStore(join(dataDir, 'store')), startMs);
  const started: { server?: RunningServer } = {};
  t.teardown(async () => {
    await started.server?.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const began = Date.now();
  const config = testServerConfig(dataDir, { store_timeout: 1.5 });
  started.server = await startServer(config, { store, logger: recordingLogger().logger });
  t.ok(Date.now() - began >= startMs, `the start waited for the store (${Date.now() - began} ms)`);
  const status = await statusOf(started.server.url);
  t.equal(status.body.status, 'pong', 'the server answers');
  t.ok(await exists(join(dataDir, 'admin.pem')), 'first-start setup was done');
});
