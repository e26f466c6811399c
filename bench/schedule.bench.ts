// How late a schedule fires: a schedule every second (six-field cron) on the compiled server, its jobs over 100
// simulated nodes of infra-loadtest; for each firing, from the occurrence the expression names to the job's `start`
// on the organization's feed (the step that sends its commits), over INFRA_BENCH_FIRINGS firings (default 30).
// Target: within 1 s of its time.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readEventStream } from '../src/api/event-stream.js';
import { scheduleSchema } from '../src/api/schedules.js';
import { ApiClient } from '../src/auth/api-client.js';
import { until } from '../test/support/deadline.js';
import { median, report, runInTempDir, SHARED, spawnTester, startServer, target } from './support.js';

const FIRINGS = Number(process.env.INFRA_BENCH_FIRINGS ?? 30);
const NODES = 100;
const PUSHY = '/organizations/default/pushy';

/** `2026-12-02 09:00:01.004000Z` (the feed's timestamp) in ms. */
const feedMs = (timestamp: string) => Date.parse(`${timestamp.replace(' ', 'T').slice(0, 23)}Z`);

runInTempDir('infra-bench-schedule-', async (dir) => {
  const server = await startServer(dir, { heartbeat_interval: 1000 });
  const keyFile = join(server.dataDir, 'admin.pem');
  const admin = new ApiClient({ baseUrl: server.url, userId: 'admin', key: await readFile(keyFile, 'utf8') });
  // Nodes that answer commits and run: the firings' jobs are real jobs on a fleet, as users run them.
  const names = Array.from({ length: NODES }, (_, i) => `lt-${i}`);
  const tester = spawnTester([
    ...['--server', server.url, '--key', keyFile, '--nodes', String(NODES)],
    ...['--heartbeat-only', '--seconds', String(FIRINGS + 60), '--json'],
  ]);
  await until(
    'the simulated nodes to be available',
    async () => {
      const states = (await admin.request('GET', `${PUSHY}/node_states`)).body as Array<{ availability: string }>;
      return states.filter((s) => s.availability === 'available').length >= NODES ? true : undefined;
    },
    60_000,
    500,
  );

  const starts = new Map<string, number>();
  const abort = new AbortController();
  const res = await admin.stream(`${PUSHY}/job_status_feed`, abort.signal);
  void (async () => {
    try {
      for await (const item of readEventStream(res.body as AsyncIterable<Uint8Array>)) {
        if (item.kind !== 'event' || item.value.event !== 'start') continue;
        const data = JSON.parse(item.value.data) as { job?: string; timestamp: string };
        if (data.job !== undefined) starts.set(data.job, feedMs(data.timestamp));
      }
    } catch {
      // aborted at the end
    }
  })();

  const made = await admin.request('POST', `${PUSHY}/schedules`, {
    name: 'every-second',
    job: { command: 'loadtest', nodes: names, run_timeout: 30 },
    cron: '* * * * * *',
    prohibit_overlap: false,
    keep_jobs: 100,
  });
  if (made.status !== 201) throw new Error(`the schedule was refused: ${JSON.stringify(made.body)}`);
  const fired = await until(
    `${FIRINGS} firings`,
    async () => {
      const s = scheduleSchema.parse((await admin.request('GET', `${PUSHY}/schedules/every-second`)).body);
      return s.jobs.length >= FIRINGS && s.jobs.every((j) => starts.has(j.id)) ? s : undefined;
    },
    (FIRINGS + 30) * 1000,
    200,
  );
  await admin.request('POST', `${PUSHY}/schedules/every-second/pause`);
  abort.abort();
  void tester.output();

  const lags = fired.jobs.map((j) => (starts.get(j.id) as number) - Date.parse(j.occurrence)).sort((a, b) => a - b);
  const p50 = median(lags);
  const max = lags.at(-1) ?? 0;
  const setup = `one schedule every second, its jobs on ${NODES} simulated nodes; the server ${SHARED}, 2 cores`;
  console.log(`lateness of ${lags.length} firings: p50 ${p50} ms, max ${max} ms; missed ${fired.missed}`);
  report('a schedule fires after its occurrence: p50, max', `${p50} ms, ${max} ms`, {
    target: target('within 1 s', max <= 1000),
    setup,
  });
  report('occurrences missed or skipped in the run', `${fired.missed + fired.skipped_overlap}`, { setup });
});
