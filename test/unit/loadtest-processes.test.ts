// The load tester's figures per server process and per Redis command: which processes it measures, and what two
// samples or two INFO commandstats snapshots make.
import t from 'tap';
import type { ServerStatusBody } from '../../src/api/status-schema.js';
import {
  commandCalls,
  processFigures,
  processRefs,
  redisOpsPerHeartbeat,
  type ProcessSample,
} from '../../src/loadtest/processes.js';

const INFO_BEFORE = [
  '# Commandstats',
  'cmdstat_get:calls=100,usec=500,usec_per_call=5.00,rejected_calls=0,failed_calls=0',
  'cmdstat_evalsha:calls=40,usec=900,usec_per_call=22.50,rejected_calls=0,failed_calls=0',
  'cmdstat_info:calls=3,usec=30,usec_per_call=10.00,rejected_calls=0,failed_calls=0',
  '',
].join('\r\n');
const INFO_AFTER = [
  '# Commandstats',
  'cmdstat_get:calls=160,usec=800,usec_per_call=5.00,rejected_calls=0,failed_calls=0',
  'cmdstat_evalsha:calls=80,usec=1800,usec_per_call=22.50,rejected_calls=0,failed_calls=0',
  'cmdstat_info:calls=4,usec=40,usec_per_call=10.00,rejected_calls=0,failed_calls=0',
  'cmdstat_set:calls=19,usec=40,usec_per_call=2.00,rejected_calls=0,failed_calls=0',
  '',
].join('\r\n');

t.test('INFO commandstats is read as calls per command', async (t) => {
  t.same(commandCalls(INFO_BEFORE), { get: 100, evalsha: 40, info: 3 });
  t.same(commandCalls('# Commandstats\r\n'), {});
});

t.test('Redis commands per heartbeat: every call between the snapshots over the heartbeats handled', async (t) => {
  const before = commandCalls(INFO_BEFORE);
  const after = commandCalls(INFO_AFTER);
  t.same(redisOpsPerHeartbeat(before, after, 1000), { calls: 120, perHeartbeat: 0.12 });
  t.same(redisOpsPerHeartbeat(before, after, 0), { calls: 120, perHeartbeat: null }, 'no heartbeat, no ratio');
  t.same(redisOpsPerHeartbeat(before, after, null), { calls: 120, perHeartbeat: null });
  t.same(redisOpsPerHeartbeat(null, after, 1000), { calls: null, perHeartbeat: null }, 'no Redis, no figure');
  t.same(redisOpsPerHeartbeat(after, before, 10), { calls: 0, perHeartbeat: 0 }, 'a reset Redis counts nothing');
});

const status = (members: Array<{ url: string; host: string; pid: number }>): ServerStatusBody => ({
  status: 'pong',
  version: '0.1.0',
  store: { kind: 'redis', state: 'ok' },
  organizations: 1,
  push_jobs: null,
  actors: null,
  cluster: {
    member: 'a',
    role: 'active',
    members: members.map((m, i) => ({ id: `m${i}`, partitions: 1, ...m })),
    partitions: 1,
    held: ['p0'],
    lease_ttl_ms: 5000,
    redis_mode: 'single',
  },
});

t.test("a cluster's members are measured, with pids only for those on this host", async (t) => {
  const s = status([
    { url: 'http://127.0.0.1:7001', host: 'elsewhere', pid: 11 },
    { url: 'http://10.0.0.5:7002', host: 'here', pid: 12 },
    { url: 'http://10.0.0.6:7003', host: 'there', pid: 13 },
  ]);
  t.same(processRefs(s, [], null, 'here'), [
    { url: 'http://127.0.0.1:7001', pid: 11 },
    { url: 'http://10.0.0.5:7002', pid: 12 },
    { url: 'http://10.0.0.6:7003', pid: null },
  ]);
  const spawned = [{ url: 'http://10.0.0.6:7003', pid: 99 }];
  t.same(processRefs(s, spawned, null, 'here')[2], { url: 'http://10.0.0.6:7003', pid: 99 }, 'a spawned one is ours');
});

t.test('without a cluster: the spawned servers, else the one found listening, else none', async (t) => {
  const spawned = [{ url: 'http://127.0.0.1:1', pid: 5 }];
  const single = { url: 'http://127.0.0.1:2', pid: 6 };
  t.same(processRefs(null, spawned, single), spawned);
  t.same(processRefs({ ...status([]), cluster: undefined }, [], single), [single]);
  t.same(processRefs(null, [], null), []);
});

t.test('per-process figures from a sample before and after the measured part', async (t) => {
  const sample = (
    url: string,
    at: number,
    cpuS: number | null,
    heartbeats: number | null,
    downs: number | null = null,
  ): ProcessSample => ({
    url,
    pid: cpuS === null ? null : 1,
    at,
    cpuS,
    heartbeats,
    downs,
    rssMb: cpuS === null ? null : 120.04,
    peakRssMb: cpuS === null ? null : 150.66,
  });
  const before = [sample('a', 1000, 2, 500, 3), sample('b', 1000, null, 100)];
  const after = [sample('a', 11_000, 7, 10_500, 5), sample('b', 11_000, null, null), sample('c', 11_000, 1, 5, 9)];
  t.same(processFigures(before, after), [
    { url: 'a', pid: 1, cpu_s: 5, cpu_pct: 50, rss_mb: 120, peak_rss_mb: 150.7, heartbeats: 10_000, downs: 2 },
    {
      url: 'b',
      pid: null,
      cpu_s: null,
      cpu_pct: null,
      rss_mb: null,
      peak_rss_mb: null,
      heartbeats: null,
      downs: null,
    },
    { url: 'c', pid: 1, cpu_s: null, cpu_pct: null, rss_mb: 120, peak_rss_mb: 150.7, heartbeats: null, downs: null },
  ]);
});
