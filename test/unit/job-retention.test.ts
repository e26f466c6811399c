// Retention: with job_retention_days N, finished jobs last changed more than N days ago leave the job list and are
// purged from the store (header, node fields, outputs), at most 1000 a pass; live and unfinished jobs stay, N = 0
// keeps everything, and a pass that found a full batch runs again on the next tick, else a period later.
import t from 'tap';
import { JobList } from '../../actors/push/job-list.js';
import { JobRetention } from '../../actors/push/job-retention.js';
import type { JobHeader } from '../../actors/push/job-store.js';
import type { JobStatus } from '../../src/push/job-states.js';
import { jobOutputsCollection, jobsCollection } from '../../src/store/collections.js';
import type { Store, StoreOp } from '../../src/store/store.js';
import { quietLogger } from '../support/logs.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 21, 10, 0, 0);
const ORG = 'acme';

function header(id: string, status: JobStatus, updated_at: number): JobHeader {
  return {
    id,
    command: 'c',
    options: {},
    run_timeout: 60,
    voting_timeout: 60,
    quorum: 1,
    status,
    created_at: updated_at - 1000,
    updated_at,
    voting_deadline: null,
    run_deadline: null,
  };
}

/** A store implementing just what purgeJobs calls, recording each call; every job has nodes a and b. */
function fakeStore() {
  const calls = {
    getFields: [] as Array<[string, string]>,
    apply: [] as StoreOp[][],
    removeFields: [] as Array<[string, string]>,
  };
  const store = {
    getFields: async (collection: string, id: string) => {
      calls.getFields.push([collection, id]);
      return new Map<string, unknown>([
        ['a', {}],
        ['b', {}],
      ]);
    },
    apply: async (ops: readonly StoreOp[]) => void calls.apply.push([...ops]),
    removeFields: async (collection: string, id: string) => void calls.removeFields.push([collection, id]),
  } as unknown as Store;
  /** The job ids purged (their fields removed last), in order. */
  const purged = () => calls.removeFields.map(([, id]) => id);
  return { store, calls, purged };
}

function fixture(days: number, headers: JobHeader[], live: ReadonlySet<string> = new Set()) {
  const list = new JobList();
  for (const h of headers) list.set(h.id, h);
  const { store, calls, purged } = fakeStore();
  const forgotten: string[] = [];
  const retention = new JobRetention({
    org: ORG,
    headers: list,
    store,
    log: quietLogger(),
    days,
    live: (id) => live.has(id),
    forget: (id) => forgotten.push(id),
  });
  /** A tick at `at`, and the purge it started (if any) stored. */
  const tick = async (at: number) => {
    retention.tick(at);
    await retention.underWay;
  };
  return { list, retention, calls, purged, forgotten, tick };
}

const old = (id: string, status: JobStatus = 'complete') => header(id, status, NOW - 3 * DAY - 1);

t.test('finished jobs older than the retention leave the list and are purged whole from the store', async (t) => {
  const { list, calls, purged, forgotten, tick } = fixture(3, [
    old('done'),
    old('failed', 'quorum_failed'),
    header('fresh', 'complete', NOW - 3 * DAY + 1000),
  ]);
  await tick(NOW);
  t.same([...list.keys()], ['fresh'], 'only the job within the retention is listed');
  t.same(forgotten.sort(), ['done', 'failed'], 'what the purged jobs answered is forgotten');
  t.same(purged().sort(), ['done', 'failed']);
  const jobs = jobsCollection(ORG);
  const outputs = jobOutputsCollection(ORG);
  const doneOps = calls.apply.find((ops) => ops[0]?.id === 'done');
  t.same(
    doneOps,
    [
      { collection: jobs, id: 'done', remove: true },
      { collection: outputs, id: 'done/a', remove: true },
      { collection: outputs, id: 'done/b', remove: true },
    ],
    'its header and every node output are removed',
  );
  t.same(
    calls.removeFields.find(([, id]) => id === 'done'),
    [jobs, 'done'],
    'and its node fields',
  );
});

t.test('jobs in flight and live jobs are never purged, however old', async (t) => {
  const unfinished = (['new', 'voting', 'running'] as const).map((s) => old(`j-${s}`, s));
  const { list, purged, forgotten, tick } = fixture(3, [...unfinished, old('live-done')], new Set(['live-done']));
  await tick(NOW);
  t.same([...list.keys()].sort(), ['j-new', 'j-running', 'j-voting', 'live-done']);
  t.same(purged(), []);
  t.same(forgotten, []);
});

t.test('job_retention_days 0 purges nothing', async (t) => {
  const { list, purged, tick } = fixture(0, [header('ancient', 'complete', 0)]);
  await tick(NOW);
  await tick(NOW + 30 * DAY);
  t.same([...list.keys()], ['ancient']);
  t.same(purged(), []);
});

t.test('a pass purges at most 1000 jobs, and one that found a full batch runs again on the next tick', async (t) => {
  const ids = Array.from({ length: 2500 }, (_, i) => `j${String(i).padStart(4, '0')}`);
  const { list, purged, tick } = fixture(
    3,
    ids.map((id) => old(id)),
  );
  await tick(NOW);
  t.equal(purged().length, 1000, 'the first pass: one batch of 1000');
  t.equal(list.size, 1500);
  await tick(NOW + 1);
  t.equal(purged().length, 2000, 'the next tick: another full batch');
  await tick(NOW + 2);
  t.equal(purged().length, 2500, 'then the 500 left');
  t.equal(list.size, 0);
  t.same(new Set(purged()), new Set(ids), 'each job purged once');
});

t.test('a pass short of a full batch runs again only after the period (1 h at most)', async (t) => {
  const { list, purged, tick } = fixture(3, [old('first')]);
  await tick(NOW);
  t.same(purged(), ['first']);
  list.set('second', old('second'));
  await tick(NOW + 1);
  await tick(NOW + HOUR - 1);
  t.same(purged(), ['first'], 'nothing more within the hour');
  t.ok(list.has('second'));
  await tick(NOW + HOUR);
  t.same(purged(), ['first', 'second'], 'the next pass an hour on');
});

t.test('a pass that found nothing waits the period too', async (t) => {
  const { list, purged, tick } = fixture(3, []);
  await tick(NOW);
  list.set('late', old('late'));
  await tick(NOW + HOUR - 1);
  t.same(purged(), []);
  await tick(NOW + HOUR);
  t.same(purged(), ['late']);
});

t.test('with a retention shorter than 2 h, the period is half the retention', async (t) => {
  const days = 1 / 24; // one hour: a pass every 30 minutes
  const { list, purged, tick } = fixture(days, [header('a', 'complete', NOW - HOUR - 1)]);
  await tick(NOW);
  t.same(purged(), ['a']);
  list.set('b', header('b', 'complete', NOW - HOUR - 1));
  await tick(NOW + HOUR / 2 - 1);
  t.same(purged(), ['a'], 'not before half an hour');
  await tick(NOW + HOUR / 2);
  t.same(purged(), ['a', 'b']);
});
