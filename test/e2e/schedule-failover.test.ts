// A schedule in a two-member cluster, run past a kill -9 of the member that owns its organization just before an
// occurrence: the survivor takes the partition over and fires that occurrence once, and every occurrence of the
// run has exactly one job. Real server processes on a private Redis.
import t from 'tap';
import { jobSchema } from '../../src/api/push-jobs.js';
import { scheduleSchema, type ScheduleBody } from '../../src/api/schedules.js';
import type { ApiClient } from '../../src/auth/api-client.js';
import { partitionName, partitionOf } from '../../src/store/partitions.js';
import { ownerOf, startCluster } from '../support/cluster.js';
import { until } from '../support/deadline.js';
import type { ServerProcess } from '../support/server-process.js';

// Two server processes, a take-over and three or four occurrences ten seconds apart: under a minute.
t.setTimeout(300_000);

const PUSHY = '/organizations/default/pushy';
/** Every ten seconds: longer than a take-over (a 3 s lease), so no occurrence may be lost to one. */
const PERIOD_MS = 10_000;

async function show(admin: ApiClient, name: string): Promise<ScheduleBody> {
  const res = await admin.request('GET', `${PUSHY}/schedules/${name}`);
  if (res.status !== 200) throw new Error(`GET schedule: ${res.status} ${JSON.stringify(res.body)}`);
  return scheduleSchema.parse(res.body);
}

t.test('kill -9 of the owner just before an occurrence: it fires once, from the survivor', async (t) => {
  const c = await startCluster(t, 2);
  const owner = await ownerOf(c.servers, partitionName(partitionOf('default')), 30_000);
  const [survivor] = c.servers.filter((s) => s !== owner) as [ServerProcess];
  const admin = await c.admin(survivor);
  const made = await admin.request('POST', `${PUSHY}/schedules`, {
    name: 'ten',
    // Nodes nobody runs: each job ends quorum_failed at once, and the firings are what is counted.
    job: { command: 'chef-client', nodes: ['ghost'] },
    cron: '*/10 * * * * *',
    prohibit_overlap: false,
    keep_jobs: 100,
  });
  t.equal(made.status, 201, JSON.stringify(made.body));

  const firstFired = await until(
    'a first firing',
    async () => ((await show(admin, 'ten')).jobs[0] ? true : undefined),
    30_000,
  );
  t.ok(firstFired);
  const due = Date.parse((await show(admin, 'ten')).next_run_at ?? '');
  // A second before the next occurrence: the owner dies with it armed, and the take-over comes after it passed.
  await until(
    'a second before the next occurrence',
    async () => (Date.now() >= due - 1000 ? true : undefined),
    PERIOD_MS + 5000,
    50,
  );
  process.kill(owner.pid, 'SIGKILL');
  const killedAt = Date.now();

  const after = await until(
    'the occurrence of the take-over and the one after it to fire',
    async () => {
      const shown = await show(admin, 'ten').catch(() => undefined);
      const latest = Date.parse(shown?.jobs[0]?.occurrence ?? '');
      return shown && latest >= due + PERIOD_MS ? shown : undefined;
    },
    60_000,
  );
  t.comment(`killed ${((due - killedAt) / 1000).toFixed(1)} s before the occurrence`);
  const occurrences = after.jobs.map((j) => Date.parse(j.occurrence)).sort((a, b) => a - b);
  t.equal(new Set(occurrences).size, occurrences.length, 'no occurrence fired twice');
  t.ok(occurrences.includes(due), 'the occurrence due during the take-over fired');
  for (let i = 1; i < occurrences.length; i += 1)
    t.equal((occurrences[i] as number) - (occurrences[i - 1] as number), PERIOD_MS, 'and none was skipped');
  t.equal(after.missed, 0, 'none missed');

  // The org's jobs, each read: the schedule's are one for each occurrence, none twice.
  const ids = ((await admin.request('GET', `${PUSHY}/jobs`)).body as Array<{ id: string }>).map((j) => j.id);
  const jobs = await Promise.all(
    ids.map(async (id) => jobSchema.parse((await admin.request('GET', `${PUSHY}/jobs/${id}`)).body)),
  );
  const byOccurrence = new Map<string, number>();
  for (const j of jobs)
    if (j.schedule?.name === 'ten')
      byOccurrence.set(j.schedule.occurrence, (byOccurrence.get(j.schedule.occurrence) ?? 0) + 1);
  t.same(
    [...byOccurrence.values()].filter((n) => n !== 1),
    [],
    'one stored job an occurrence',
  );
  t.ok(byOccurrence.size >= occurrences.length, 'every listed firing has its job stored');
});
