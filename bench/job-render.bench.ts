// What a GET of a large running job costs the server to render: the job's body built from its state (nodes by
// status, each node's HTTP-date), serialized and encoded, at 1,000 and 10,000 nodes. The nodes' times are spread
// over five seconds, as a job's nodes move over a few seconds and are shown in name order.
//   node --import tsx bench/job-render.bench.ts
import { newJob } from '../actors/push/job-machine.js';
import { jobJson } from '../src/api/job-view.js';
import type { NodeJobStatus } from '../actors/push/job-model.js';
import { report } from './support.js';

const ROUNDS = 100;
const STATUSES: NodeJobStatus[] = ['running', 'succeeded', 'ready'];

function timeMs(f: () => unknown): number {
  for (let i = 0; i < 20; i++) f();
  const started = performance.now();
  for (let i = 0; i < ROUNDS; i++) f();
  return (performance.now() - started) / ROUNDS;
}

console.log(
  '| nodes | body, names sorted once (ms) | body, names sorted each time (ms) | JSON.stringify (ms) | UTF-8 (ms) | total (ms) | bytes |',
);
console.log('| ----: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const count of [1000, 10_000]) {
  const at = Date.UTC(2026, 10, 25, 12, 0, 0);
  // Names in no particular order: the job's nodes as a user listed them.
  const names = Array.from({ length: count }, (_, i) => `node-${(i * 7919) % 100_003}`);
  const job = newJob({
    id: 'bench',
    command: 'chef-client',
    options: {},
    run_timeout: 3600,
    voting_timeout: 60,
    quorum: count,
    nodes: names,
    at,
  });
  names.forEach((node, i) => {
    job.nodes[node] = STATUSES[i % STATUSES.length] as NodeJobStatus;
    job.node_updated_at[node] = at + (i % 5) * 1000 + 137;
  });
  const sorted = Object.keys(job.nodes).sort();
  const once = timeMs(() => jobJson(job, sorted));
  const each = timeMs(() => jobJson(job));
  const body = jobJson(job, sorted);
  const stringify = timeMs(() => JSON.stringify(body));
  const text = JSON.stringify(body);
  const encode = timeMs(() => new TextEncoder().encode(text));
  const total = timeMs(() => new TextEncoder().encode(JSON.stringify(jobJson(job, sorted))));
  const row = [count, once, each, stringify, encode, total].map((v, i) => (i === 0 ? String(v) : v.toFixed(2)));
  console.log(`| ${row.join(' | ')} | ${Buffer.byteLength(text)} |`);
  report(`a ${count}-node running job rendered, serialized and encoded`, `${total.toFixed(2)} ms`);
}
