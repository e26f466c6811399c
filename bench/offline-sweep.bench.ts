// How soon a silent node is marked down once its offline_threshold runs out: silence is swept SWEEPS_PER_INTERVAL
// times an interval, so the delay past the threshold should stay within a small part of an interval (half of one
// is the bound this was written against), not land anywhere in the next interval as with one check each. A server
// in this process (heartbeat_interval 1 s, offline_threshold 2) and one scripted node, silent ROUNDS times, each
// silence starting at another point of the interval.
//   node --import tsx bench/offline-sweep.bench.ts
import type { Test } from 'tap';
import { startTestServer } from '../test/support/server.js';
import { poll, startTestNode } from '../test/support/test-node.js';
import { median, report, scope, target, teardowns } from './support.js';

const INTERVAL_MS = 1000;
const THRESHOLD = 2;
const ROUNDS = Number(process.env.INFRA_BENCH_SWEEP_ROUNDS ?? 6);

try {
  const s = await startTestServer(scope as unknown as Test, 'file', {
    heartbeat_interval: INTERVAL_MS,
    offline_threshold: THRESHOLD,
    online_threshold: 1,
  });
  const stateOf = async (): Promise<string | undefined> =>
    ((await s.admin.request('GET', '/organizations/default/pushy/node_states/sw-1')).body as { status?: string })
      .status;
  const n = await startTestNode(s, 'sw-1');
  teardowns.push(() => n.stop());
  await poll('sw-1 to be up', async () => ((await stateOf()) === 'up' ? true : undefined));

  const late: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const heard = n.sent.length;
    n.resumeHeartbeats();
    await poll('a heartbeat', () => (n.sent.length > heard ? true : undefined));
    await poll('sw-1 to be up', async () => ((await stateOf()) === 'up' ? true : undefined), 10_000);
    // Each silence starts at another point of the interval.
    await new Promise((r) => setTimeout(r, (round * INTERVAL_MS) / ROUNDS));
    n.pauseHeartbeats();
    const lastBeat = n.sent.filter((r) => r.body.type === 'heartbeat').at(-1)?.at ?? 0;
    await poll('sw-1 to be down', async () => ((await stateOf()) === 'down' ? true : undefined), 10_000);
    late.push(Date.now() - lastBeat - THRESHOLD * INTERVAL_MS);
  }
  const sorted = [...late].sort((a, b) => a - b);
  console.log(`heartbeat_interval ${INTERVAL_MS} ms, offline_threshold ${THRESHOLD}, ${ROUNDS} silences\n`);
  console.log('| down after the threshold (ms): min | median | max | bound (half an interval) | max / bound |');
  console.log('| ---: | ---: | ---: | ---: | ---: |');
  const max = sorted.at(-1) ?? NaN;
  const bound = INTERVAL_MS / 2;
  console.log(`| ${sorted[0]} | ${median(sorted)} | ${max} | ${bound} | ${(max / bound).toFixed(2)} |`);
  report(
    `a silent node marked down past its threshold: max of ${ROUNDS}`,
    `${max} ms (min ${sorted[0]}, median ${median(sorted)})`,
    { target: target(`≤ ${bound} ms`, max <= bound), ratio: `${(max / bound).toFixed(2)} × the bound` },
  );
  if (sorted[0] !== undefined && sorted[0] <= 0) {
    console.log('\na node was marked down before its threshold ran out');
    process.exitCode = 1;
  }
} finally {
  for (const fn of teardowns.splice(0).reverse()) await fn();
}
