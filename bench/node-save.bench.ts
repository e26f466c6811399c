// Write cost of one node save in an organization of 10,000 nodes: the request goes through the
// organization actor (ACL check, search index update, one store write), on both stores. The organization
// is seeded straight into the store, then loaded as on a restart (that load time is reported too).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Ref } from 'nact';
import { ask, startSystem } from '../actors/system.js';
import type { Reply, RequestContext } from '../actors/shared/reply.js';
import { serverConfigSchema } from '../src/config/server-config.js';
import { FileStore } from '../src/store/file-store.js';
import { holdEveryPartition } from '../src/cluster/leases.js';
import { RedisStore } from '../src/store/redis-store.js';
import type { Store } from '../src/store/store.js';
import { PushHub } from '../src/transport/push-hub.js';
import { newOrgWrites } from '../actors/org/new-org.js';
import { persistWrites } from '../actors/org/org-store.js';
import { Counters } from '../src/lib/counters.js';
import { orgCollection } from '../src/store/collections.js';
import { createLogger } from '../src/lib/logger.js';
import { defaultContainerAcl } from '../src/auth/default-acls.js';
import { generateKeyPair } from '../src/auth/rsa-keys.js';
import { report } from './support.js';

const NODES = 10_000;
const SAVES = 300;
const ctx: RequestContext = {
  requestor: { kind: 'user', name: 'pivotal', superuser: true, serverAdmin: true, validator: false },
  baseUrl: 'http://bench',
  apiVersion: 1,
  authKey: '',
  authPublicKey: '',
};

function nodeBody(i: number, generation: number): Record<string, unknown> {
  const automatic: Record<string, unknown> = {
    platform: i % 2 ? 'ubuntu' : 'debian',
    platform_version: '22.04',
    ipaddress: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
    hostname: `node-${i}`,
    fqdn: `node-${i}.example.com`,
    languages: { ruby: { version: '3.2.1' }, python: { version: '3.11.2' } },
    cpu: { total: 2 + (i % 16), model_name: 'Xeon' },
    memory: { total: `${4 + (i % 64)}GB` },
    uptime_seconds: generation,
  };
  for (let k = 0; k < 150; k++) automatic[`attr_${k}`] = `value-${k}-${i % 7}`;
  return {
    name: `node-${i}`,
    chef_environment: i % 3 ? 'prod' : 'staging',
    json_class: 'Chef::Node',
    chef_type: 'node',
    run_list: [`role[${i % 5 ? 'web' : 'db'}]`, 'recipe[base]'],
    normal: { push_jobs: { whitelist: { 'chef-client': 'chef-client' } } },
    default: {},
    override: {},
    automatic,
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

async function run(kind: string, store: Store): Promise<string> {
  const key = await generateKeyPair();
  await persistWrites(store, 'bench', newOrgWrites('bench', 'Bench', key.publicKeyPem, Date.now()));
  const acl = defaultContainerAcl('nodes');
  for (let from = 0; from < NODES; from += 1000) {
    const docs = [];
    for (let i = from; i < Math.min(NODES, from + 1000); i++)
      docs.push([`node-${i}`, { name: `node-${i}`, body: nodeBody(i, 0), acl }] as const);
    await store.putMany(orgCollection('bench', 'nodes'), docs);
  }
  const config = { ...serverConfigSchema.parse({}), server_heartbeat_port: 0, command_port: 0 };
  const t0 = Date.now();
  const log = createLogger({ level: 'warn', format: 'text' });
  const system = await startSystem(store, new PushHub(config, store, log).parts(), { counters: new Counters(), log });
  const loadMs = Date.now() - t0;
  const org = system.org('bench');
  if (!org) throw new Error('no organization');
  const costs: number[] = [];
  for (let n = 0; n < SAVES; n++) {
    const i = (n * 37) % NODES;
    const start = process.hrtime.bigint();
    const reply = await ask(org, (replyTo: Ref<Reply>) => ({
      type: 'request' as const,
      ctx,
      op: { type: 'update_object' as const, kind: 'nodes' as const, name: `node-${i}`, body: nodeBody(i, n + 1) },
      replyTo,
    }));
    if (reply.status !== 200) throw new Error(`save failed: ${reply.status}`);
    costs.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  await system.stop();
  costs.sort((a, b) => a - b);
  report(
    `node save in an organization of ${NODES} nodes, ${kind} store: p50 / p99`,
    `${Math.round(percentile(costs, 50))} / ${Math.round(percentile(costs, 99))} µs (loaded in ${loadMs} ms)`,
  );
  return `| ${kind} | ${NODES} | ${loadMs} | ${Math.round(percentile(costs, 50))} | ${Math.round(percentile(costs, 99))} |`;
}

async function main(): Promise<void> {
  const rows: string[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'infra-bench-'));
  try {
    rows.push(await run('file', new FileStore(join(dir, 'store'))));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const url = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `bench:${process.pid}:`;
  const redis = await RedisStore.connect(url, prefix).catch(() => null);
  if (redis) {
    // Every write is fenced by a partition lease, as a server's are: this process holds them all.
    const leases = await holdEveryPartition(redis);
    rows.push(await run('redis', redis));
    const cleanup = await RedisStore.connect(url, prefix);
    cleanup.fenceWith(leases);
    await cleanup.drop('org');
    await cleanup.drop('orgs');
    await cleanup.close();
    await leases.stop(true);
  } else {
    rows.push('| redis | - | - | - | - | (no Redis answered) |');
  }
  console.log('| store | nodes in org | load on start (ms) | node save p50 (µs) | node save p99 (µs) |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
