// The chaos checker on small hand-made histories: for each invariant one history that holds it and one that breaks
// it, the violation named with what the node and the server each said; and the notes on quorum failures and drops.
import t from 'tap';
import type { ClientRecord, NodeJobRecord } from '../support/chaos/client-records.js';
import { checkHistory, nodesBack, type Bounds, type Invariant } from '../support/chaos/checker.js';
import type { FaultEvent, History, NodeLists, Sample } from '../support/chaos/history.js';
import type { Fault } from '../support/chaos/nemesis.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const s = (sec: number) => T0 + sec * 1000;
const BOUNDS: Bounds = { failoverMs: 20_000, nodeBackMs: 10_000, unownedMs: 8000, slackMs: 1500 };
const NODES = ['n1', 'n2'];
const PARTITIONS = ['global', 'p0', 'p1'];
const JOB = 'job1';

function record(node: string, jobs: NodeJobRecord[] = [], more: Partial<ClientRecord> = {}): ClientRecord {
  return {
    node,
    jobs: Object.fromEntries(jobs.map((j) => [j.job, j])),
    drops: {},
    firstDrops: {},
    reconfigures: [],
    starts: [s(-60)],
    connections: [],
    offline: [],
    otherWarnings: [],
    ...more,
  };
}

/** A node that committed at 1 s, ran at 1.1 s and reported succeeded at 9 s. */
const ranOk = (job = JOB): NodeJobRecord => ({
  job,
  committed: { at: s(1), command: 'long' },
  ran: { at: s(1.1), commandLine: 'sleep 8', pgid: 10 },
  outcome: { at: s(9), status: 'succeeded', how: 'exit status 0', exitStatus: 0 },
  lines: [],
});

const fault = (over: Partial<Fault> = {}): Fault => ({
  round: 0,
  kind: 'kill',
  target: 1,
  way: null,
  offsetMs: 2000,
  durationMs: 10_000,
  ...over,
});
const events = (f: Fault, from: number, to: number): FaultEvent[] => [
  { at: s(from), phase: 'start', fault: f, member: f.target, detail: '' },
  { at: s(to), phase: 'end', fault: f, member: f.target, detail: '' },
];

/** Every member holding its share and every node available, at `sec`. */
function sample(sec: number, over: Partial<Sample> = {}): Sample {
  return {
    at: s(sec),
    members: [
      { member: 0, answered: true, held: ['global', 'p0'], members: 2, connected: 1, status: 'pong', store: 'ok' },
      { member: 1, answered: true, held: ['p1'], members: 2, connected: 1, status: 'pong', store: 'ok' },
    ],
    nodes: Object.fromEntries(NODES.map((n) => [n, { status: 'up', availability: 'available' }])),
    nodesVia: 0,
    ...over,
  };
}

interface Shape {
  status?: 'complete' | 'running' | 'quorum_failed' | 'timed_out' | 'aborted';
  nodes?: NodeLists;
  /** When the job's end was first seen, and the server's updated_at: null for a job never seen ended. */
  endedAt?: number | null;
  records?: ClientRecord[];
  faults?: FaultEvent[];
  samples?: Sample[];
  userAborts?: History['userAborts'];
  endedRunAt?: number;
}

function history(o: Shape = {}): History {
  const endedAt = o.endedAt === undefined ? s(10) : o.endedAt;
  return {
    settings: {
      seed: 1,
      rounds: 1,
      members: 2,
      nodes: NODES,
      redis: 'single',
      balancer: true,
      leaseTtlMs: 5000,
      heartbeatMs: 1000,
      offlineThreshold: 3,
      partitions: PARTITIONS,
      memberPorts: [
        { api: 4000, command: 4001, heartbeat: 4002 },
        { api: 4010, command: 4011, heartbeat: 4012 },
      ],
    },
    plan: [],
    startedAt: s(-1),
    endedAt: o.endedRunAt ?? s(60),
    submissions: [
      {
        round: 0,
        role: 'long',
        via: 'http://balancer',
        member: null,
        nodes: NODES,
        command: 'long',
        runTimeoutS: 30,
        votingTimeoutS: 10,
        at: s(0),
        id: JOB,
        answer: { status: 201, body: { id: JOB } },
        tries: [{ at: s(0), status: 201 }],
      },
    ],
    jobs: {
      [JOB]: {
        id: JOB,
        endedAt,
        last: {
          at: endedAt ?? s(59),
          status: o.status ?? 'complete',
          nodes: o.nodes ?? { succeeded: NODES },
          updatedAt: endedAt ?? s(2),
        },
      },
    },
    faults: o.faults ?? [],
    samples: o.samples ?? [0, 1, 2, 3].map((x) => sample(x * 10)),
    userAborts: o.userAborts ?? [],
    records: Object.fromEntries((o.records ?? NODES.map((n) => record(n, [ranOk()]))).map((r) => [r.node, r])),
  };
}

const named = (h: History, invariant: Invariant) =>
  checkHistory(h, BOUNDS).violations.filter((v) => v.invariant === invariant);

t.test('a run where everything went right breaks nothing', async (t) => {
  const result = checkHistory(history(), BOUNDS);
  t.same(result.violations, []);
  t.same(result.notes.quorumFailed, []);
  t.same(result.notes.stuck, []);
});

t.test('job_never_ended: a job seen running to the end of the run, or ending past its bound', async (t) => {
  t.same(named(history(), 'job_never_ended'), [], 'ended 10 s after its start');
  const open = named(history({ status: 'running', nodes: { running: NODES }, endedAt: null }), 'job_never_ended');
  t.equal(open.length, 1);
  t.match(open[0], { job: JOB, round: 0, detail: /still unfinished .*running \(running: n1, n2\)/ });
  const late = named(history({ endedAt: s(65) }), 'job_never_ended');
  t.match(
    late,
    [{ detail: /ended 65.0 s after its start, past the bound of 60.0 s/ }],
    '10 s voting_timeout, 30 s run_timeout, 20 s for the faults',
  );
});

t.test('result_lost: a result the node reported that its job does not show', async (t) => {
  t.same(named(history(), 'result_lost'), []);
  const lost = named(history({ status: 'timed_out', nodes: { succeeded: ['n1'], timed_out: ['n2'] } }), 'result_lost');
  t.equal(lost.length, 1);
  t.match(lost[0], {
    node: 'n2',
    job: JOB,
    detail: /n2 reported succeeded \(exit status 0\) at 10:00:09.000.*n2 timed_out/,
  });
  const failed = record('n2', [
    { ...ranOk(), outcome: { at: s(9), status: 'failed', how: 'exit status 2', exitStatus: 2 } },
  ]);
  t.same(
    named(
      history({ nodes: { succeeded: ['n1'], failed: ['n2'] }, records: [record('n1', [ranOk()]), failed] }),
      'result_lost',
    ),
    [],
    'a failure shown as failed is kept',
  );
  t.equal(
    named(history({ nodes: { succeeded: NODES }, records: [record('n1', [ranOk()]), failed] }), 'result_lost').length,
    1,
    'a failure shown as succeeded is not the node’s result',
  );
});

t.test('spurious_crash: crashed although the node’s command ran to its end', async (t) => {
  const crashed = history({ nodes: { succeeded: ['n1'], crashed: ['n2'] } });
  const found = named(crashed, 'spurious_crash');
  t.equal(found.length, 1);
  t.match(found[0], { node: 'n2', detail: /n2 crashed; its own record: committed .* succeeded \(exit status 0\)/ });
  const killed = record('n2', [
    { ...ranOk(), outcome: { at: s(5), status: 'failed', how: 'killed by SIGKILL', exitStatus: null } },
  ]);
  t.same(
    named(
      history({ nodes: { succeeded: ['n1'], crashed: ['n2'] }, records: [record('n1', [ranOk()]), killed] }),
      'spurious_crash',
    ),
    [],
    'its command was killed',
  );
  const restarted = record('n2', [{ ...ranOk(), outcome: undefined }], { starts: [s(-60), s(4)] });
  t.same(
    named(
      history({ nodes: { succeeded: ['n1'], crashed: ['n2'] }, records: [record('n1', [ranOk()]), restarted] }),
      'spurious_crash',
    ),
    [],
    'its client was started again during the job',
  );
});

t.test('spurious_abort: told to abort a live job, or shown aborted with no user’s abort', async (t) => {
  const atEnd = record('n2', [{ ...ranOk(), outcome: undefined, aborted: { at: s(30.4), phase: 'running' } }]);
  t.same(
    named(
      history({
        status: 'timed_out',
        nodes: { succeeded: ['n1'], timed_out: ['n2'] },
        endedAt: s(30),
        records: [record('n1', [ranOk()]), atEnd],
      }),
      'spurious_abort',
    ),
    [],
    'told to abort when the job timed out',
  );
  const early = record('n2', [{ ...ranOk(), outcome: undefined, aborted: { at: s(3), phase: 'running' } }]);
  const found = named(
    history({ nodes: { succeeded: ['n1'], aborted: ['n2'] }, records: [record('n1', [ranOk()]), early] }),
    'spurious_abort',
  );
  t.equal(found.length, 1);
  t.match(found[0], {
    node: 'n2',
    detail: /told to abort at 10:00:03.000, the job ending at 10:00:10.000.*n2 aborted/,
  });
  const never = named(history({ nodes: { succeeded: ['n1'], aborted: ['n2'] } }), 'spurious_abort');
  t.match(never, [{ node: 'n2', detail: /never told to abort/ }], 'aborted on the server only');
  t.same(
    named(
      history({
        status: 'aborted',
        nodes: { succeeded: ['n1'], aborted: ['n2'] },
        records: [record('n1', [ranOk()]), early],
        userAborts: [{ job: JOB, at: s(2.9) }],
      }),
      'spurious_abort',
    ),
    [],
    'a user aborted it',
  );
});

t.test('node_not_back: a node unavailable through the bound after a fault is healed', async (t) => {
  const f = fault();
  const faults = events(f, 2, 12);
  const n2 = (availability: 'available' | 'unavailable') => ({
    n1: { status: 'up' as const, availability: 'available' as const },
    n2: { status: availability === 'available' ? ('up' as const) : ('down' as const), availability },
  });
  const back = [sample(12, { nodes: n2('unavailable') }), sample(18, { nodes: n2('available') }), sample(40)];
  t.same(named(history({ faults, samples: back }), 'node_not_back'), [], 'available 6 s after');
  const late = [sample(12, { nodes: n2('unavailable') }), sample(21, { nodes: n2('unavailable') }), sample(30)];
  const found = named(history({ faults, samples: late }), 'node_not_back');
  t.equal(found.length, 1);
  t.match(found[0], {
    node: 'n2',
    round: 0,
    detail:
      /not available within 10.0 s after kill was healed.*last seen down, unavailable.*available again 18.0 s after/,
  });
  t.same(
    named(history({ faults, samples: late.slice(0, 1), endedRunAt: s(15) }), 'node_not_back'),
    [],
    'the run ended before the bound: nothing to judge',
  );
});

t.test('the nodes away when a fault is healed, and how long each takes to be available again', async (t) => {
  const f = fault();
  const faults = events(f, 2, 12);
  const n2 = (availability: 'available' | 'unavailable') => ({
    n1: { status: 'up' as const, availability: 'available' as const },
    n2: { status: availability === 'available' ? ('up' as const) : ('down' as const), availability },
  });
  const samples = [sample(12, { nodes: n2('unavailable') }), sample(18, { nodes: n2('available') }), sample(40)];
  t.same(nodesBack(history({ faults, samples })), [{ round: 0, node: 'n2', ms: 6000 }], 'n2, 6 s after the healing');
  const never = [sample(12, { nodes: n2('unavailable') }), sample(30, { nodes: n2('unavailable') })];
  t.same(nodesBack(history({ faults, samples: never })), [{ round: 0, node: 'n2', ms: null }], 'never back');
  t.same(nodesBack(history({ faults, samples: [sample(12, { nodes: n2('available') })] })), [], 'none away');
});

t.test('partition_unowned: served by no live member past the bound, Redis up, every live member heard', async (t) => {
  const f = fault({ target: 1 });
  const faults = events(f, 2, 30);
  const without = (sec: number, held: string[]) =>
    sample(sec, {
      members: [
        { member: 0, answered: true, held, members: 1, connected: 2, status: 'pong', store: 'ok' },
        { member: 1, answered: false, held: [], members: 0, connected: 0, status: null, store: null },
      ],
    });
  const quick = [sample(0), without(3, ['global', 'p0']), without(9, ['global', 'p0', 'p1']), sample(31)];
  t.same(named(history({ faults, samples: quick }), 'partition_unowned'), [], 'p1 taken over after 6 s');
  const slow = [sample(0), without(3, ['global', 'p0']), without(13, ['global', 'p0']), without(14, PARTITIONS)];
  const found = named(history({ faults, samples: slow }), 'partition_unowned');
  t.equal(found.length, 1);
  t.match(found[0], {
    partitions: ['p1'],
    round: 0,
    detail: /served by no live member .* 11.0 s with Redis up.*taken by m0/,
  });
  const redis = events(fault({ kind: 'redis_restart', target: null }), 2, 12);
  t.same(named(history({ faults: redis, samples: slow }), 'partition_unowned'), [], 'Redis away for most of it');
  const unheard = [
    sample(0),
    sample(3, {
      members: [
        { member: 0, answered: true, held: ['global', 'p0'], members: 2, connected: 1, status: 'pong', store: 'ok' },
        { member: 1, answered: false, held: [], members: 0, connected: 0, status: null, store: null },
      ],
    }),
    sample(14, {
      members: [
        { member: 0, answered: true, held: ['global', 'p0'], members: 2, connected: 1, status: 'pong', store: 'ok' },
        { member: 1, answered: false, held: [], members: 0, connected: 0, status: null, store: null },
      ],
    }),
    sample(15),
  ];
  t.same(named(history({ samples: unheard }), 'partition_unowned'), [], 'a live member unheard proves nothing');
});

t.test('notes: why a job failed its quorum, drops by reason, nodes stuck at the end', async (t) => {
  const refused = record('n2', [
    { job: JOB, refused: { at: s(1), command: 'long', reason: 'busy', detail: 'busy with job x' }, lines: [] },
  ]);
  const withDrops = record('n1', [{ job: JOB, committed: { at: s(1), command: 'long' }, lines: [] }], {
    drops: { replay: 12, bad_signature: 1 },
    firstDrops: {
      replay: { at: s(5), line: 'dropped message (replay): …' },
      bad_signature: { at: s(6), line: 'dropped message (bad_signature): …' },
    },
    connections: [{ at: s(-50), heartbeat: 'tcp://127.0.0.1:4012' }],
  });
  const last = sample(30, {
    nodes: { n1: { status: 'up', availability: 'available' }, n2: { status: 'down', availability: 'unavailable' } },
  });
  const h = history({
    status: 'quorum_failed',
    nodes: { was_ready: ['n1'], nacked: ['n2'] },
    records: [withDrops, refused],
    samples: [sample(0), last],
  });
  const { notes, violations } = checkHistory(h, BOUNDS);
  t.same(violations, [], 'a node that refused a job breaks nothing by itself');
  t.equal(notes.quorumFailed.length, 1);
  t.match(notes.quorumFailed[0], {
    job: JOB,
    why: /^n2 nacked \(up\/available at the start, connected to no member yet; refused \(busy: busy with job x\)/,
  });
  t.same(
    notes.drops.map((d) => [d.node, d.reason, d.count, d.gateway]),
    [
      ['n1', 'replay', 12, 'm1'],
      ['n1', 'bad_signature', 1, 'm1'],
    ],
    'replay drops first, with the member the node was connected to',
  );
  t.same(notes.stuck, ['n2']);
});
