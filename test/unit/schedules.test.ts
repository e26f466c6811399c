// The schedules of one organization on the manual clock: an occurrence fires its job once its record is stored, a
// record the store refuses fires nothing and is tried again, a new owner starts the job of a firing recorded without
// it, once, and a schedule let go fires nothing more.
import t from 'tap';
import type { JobState } from '../../actors/push/job-model.js';
import type { PushPorts } from '../../actors/push/ports.js';
import { occurrenceJobId, type ScheduleState } from '../../actors/push/schedule-machine.js';
import { Schedules } from '../../actors/push/schedules.js';
import { jobStartSchema } from '../../src/api/push-jobs.js';
import { Counters } from '../../src/lib/counters.js';
import type { Store } from '../../src/store/store.js';
import { quietLogger } from '../support/logs.js';
import { ManualClock } from '../support/manual-clock.js';

const T0 = Date.UTC(2026, 11, 2, 9, 0, 0);
const MIN = 60_000;

function schedule(over: Partial<ScheduleState> = {}): ScheduleState {
  return {
    name: 'minutely',
    uid: 'u1',
    job: jobStartSchema.parse({ command: 'chef-client', nodes: ['a', 'b'] }),
    cron: '* * * * *',
    time_zone: 'UTC',
    prohibit_overlap: true,
    keep_jobs: 10,
    paused: false,
    requestor: 'olga',
    created_at: T0 + 1000,
    updated_at: T0 + 1000,
    handled_through: T0 + 1000,
    jobs: [],
    skipped_overlap: 0,
    missed: 0,
    ...over,
  };
}

function setup(initial: ScheduleState[], known: ReadonlySet<string> = new Set()) {
  const clock = new ManualClock(T0 + 1000);
  const stored = new Map<string, ScheduleState>();
  let refuse = false;
  let held: Promise<void> | undefined;
  let gone = false;
  const store = {
    put: async (_collection: string, id: string, doc: unknown) => {
      await held;
      if (refuse) throw new Error('fenced: another process holds the lease');
      stored.set(id, structuredClone(doc) as ScheduleState);
    },
    remove: async (_collection: string, id: string) => void stored.delete(id),
  } as unknown as Store;
  const counters = new Counters();
  const ports = {
    store,
    now: () => clock.now(),
    timers: clock,
    counters,
    log: quietLogger(),
    settings: { voting_timeout: 60 },
  } as unknown as PushPorts;
  const started: JobState[] = [];
  const running = new Set<string>();
  const all = new Map(initial.map((s) => [s.name, s]));
  const schedules: Schedules = new Schedules(
    'acme',
    all,
    ports,
    {
      running: (id) => running.has(id),
      known: (id) => known.has(id) || started.some((j) => j.id === id),
      start: (job) => {
        started.push(job);
        running.add(job.id);
      },
      turn: (run) => {
        if (!gone) run();
      },
    },
    300_000,
  );
  return {
    clock,
    stored,
    started,
    running,
    all,
    schedules,
    counters,
    refuseSaves: (on: boolean) => (refuse = on),
    /** Saves wait until `release` is called. */
    holdSaves: () => {
      let release = () => undefined as void;
      held = new Promise<void>((resolve) => (release = resolve));
      return release;
    },
    /** The supervisor stops, as its server does, without letting the schedules go: its turns run no more. */
    stopSupervisor: () => (gone = true),
  };
}

t.test('an occurrence is stored, then its job starts; the next one is armed', async (t) => {
  const f = setup([schedule()]);
  f.schedules.resume();
  await f.clock.advance(MIN - 1000 - 1);
  t.same(f.started, [], 'nothing before the occurrence');
  await f.clock.advance(1);
  t.equal(f.started.length, 1, 'the occurrence at 09:01 fires');
  const job = f.started[0] as JobState;
  t.equal(job.id, occurrenceJobId({ uid: 'u1' }, T0 + MIN));
  t.same(job.schedule, { name: 'minutely', occurrence: T0 + MIN });
  t.equal(job.requestor, 'olga', "the schedule's creator starts it");
  t.same(f.stored.get('minutely')?.jobs, [{ id: job.id, occurrence: T0 + MIN }], 'recorded before it started');
  t.equal(f.counters.get('schedule_firings', 'fired'), 1);
  await f.clock.advance(MIN);
  t.equal(f.started.length, 1, 'its job still runs: prohibit_overlap skips 09:02');
  t.equal(f.stored.get('minutely')?.skipped_overlap, 1);
  f.running.clear();
  await f.clock.advance(MIN);
  t.equal(f.started.length, 2, 'the job ended: 09:03 fires');
});

t.test('a record the store refuses fires nothing, and is tried again until it is stored', async (t) => {
  const f = setup([schedule()]);
  f.schedules.resume();
  f.refuseSaves(true);
  await f.clock.advance(MIN - 1000);
  t.same(f.started, [], 'not stored: no job');
  t.equal(f.all.get('minutely')?.handled_through, T0 + 1000, 'the step is undone in memory');
  await f.clock.advance(3000);
  t.same(f.started, [], 'still refused');
  f.refuseSaves(false);
  await f.clock.advance(1000);
  t.equal(f.started.length, 1, 'stored at last: the occurrence fires, late but within schedule_catchup');
  t.equal(f.started[0]?.schedule?.occurrence, T0 + MIN);
});

t.test('a new owner starts the job of a firing recorded without it, once; one that is stored it leaves', async (t) => {
  const id = occurrenceJobId({ uid: 'u1' }, T0 + MIN);
  const recorded = schedule({ handled_through: T0 + MIN, jobs: [{ id, occurrence: T0 + MIN }] });
  const f = setup([recorded]);
  await f.clock.advance(5000);
  f.schedules.resume();
  await f.clock.advance(0);
  t.same(
    f.started.map((j) => j.id),
    [id],
    'the recorded job, with its id',
  );
  f.schedules.resume();
  await f.clock.advance(0);
  t.equal(f.started.length, 1, 'not twice');

  const stored = setup([recorded], new Set([id]));
  stored.schedules.resume();
  await stored.clock.advance(0);
  t.same(stored.started, [], 'a job the store holds is not started again');
});

t.test(
  'a record stored once its supervisor stopped starts no job: the answer waits for a turn that never comes',
  async (t) => {
    const f = setup([schedule()]);
    f.schedules.resume();
    const release = f.holdSaves();
    await f.clock.advance(MIN - 1000);
    t.same(f.started, [], 'the record is being stored');
    f.stopSupervisor();
    release();
    await f.clock.advance(0);
    t.ok(f.stored.get('minutely')?.jobs.length === 1, 'the store took the record');
    t.same(f.started, [], 'no job started outside a turn of the supervisor');
  },
);

t.test('a schedule let go fires nothing more', async (t) => {
  const f = setup([schedule()]);
  f.schedules.resume();
  f.schedules.stop();
  await f.clock.advance(5 * MIN);
  t.same(f.started, []);
  t.equal(f.clock.pending, 0, 'no timer is left');
});
