// The job machine: every cell of the voting and running tables, the job-level checks, quorum, timers, restore.
import t from 'tap';
import { newJob, resolveQuorum, stepJob } from '../../actors/push/job-machine.js';
import { jobNodesByStatus } from '../../src/api/job-view.js';
import { CRASH, RUNNING, VOTING, WAVES, type Cell } from '../../actors/push/job-tables.js';
import { NODE_JOB_STAGE, isFinished } from '../../src/push/job-states.js';
import { NODE_ANSWER_TYPES } from '../../src/protocol/messages.js';
import {
  jobStateSchema,
  type JobEffect,
  type JobEvent,
  type JobState,
  type NodeAnswer,
  type NodeJobStatus,
} from '../../actors/push/job-model.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const VOTING_DEADLINE = T0 + 60_000;
const RUN_TIMEOUT = 300;

type NodeEventType = NodeAnswer | 'node_down';
const nodeEvents: NodeEventType[] = [...NODE_ANSWER_TYPES, 'node_down'];
const terminalNodeStatuses: NodeJobStatus[] = [
  'succeeded',
  'failed',
  'aborted',
  'crashed',
  'nacked',
  'unavailable',
  'was_ready',
  'timed_out',
];

function job(nodes: string[], quorum = nodes.length): JobState {
  return newJob({
    id: 'job1',
    command: 'chef-client',
    nodes,
    run_timeout: RUN_TIMEOUT,
    voting_timeout: 60,
    quorum,
    options: { capture: true, dir: '/tmp' },
    at: T0,
  });
}

function started(nodes: string[], quorum = nodes.length, available: string[] = nodes): JobState {
  const s = job(nodes, quorum);
  stepJob(s, { type: 'start', at: T0, available: new Set(available) });
  return s;
}

function nodeEvent(type: NodeEventType, node: string, at = T0 + 1000): JobEvent {
  return { type, node, at };
}

/** Steps each event in turn and returns the last step's effects. */
function run(s: JobState, ...events: JobEvent[]): JobEffect[] {
  let effects: JobEffect[] = [];
  for (const event of events) effects = stepJob(s, event).effects;
  return effects;
}

function sent(effects: JobEffect[], message: 'commit' | 'run' | 'abort'): string[] | undefined {
  for (const e of effects) if (e.type === 'send' && e.message === message) return e.nodes;
  return undefined;
}

const reasons = (effects: JobEffect[]): string[] => effects.flatMap((e) => (e.type === 'ignored' ? [e.reason] : []));
const types = (effects: JobEffect[]): string[] =>
  effects.flatMap((e) => (e.type === 'feed' ? [] : [e.type === 'send' ? `send ${e.message}` : e.type]));
/** What the step told the job's feed, as `event node:status`. */
const notes = (effects: JobEffect[]): string[] =>
  effects.flatMap((e) =>
    e.type === 'feed'
      ? e.notes.map((n) =>
          'node' in n.data
            ? `${n.event} ${n.data.node}${'status' in n.data ? `:${n.data.status}` : ''}`
            : `${n.event}${'status' in n.data ? ` ${String(n.data.status)}` : ''}`,
        )
      : [],
  );

/** A persisted snapshot as the actor would read it back, restored with every node available. */
function restoredWith(s: JobState, edit: (doc: JobState) => void): JobState {
  const doc = jobStateSchema.parse(JSON.parse(JSON.stringify(s)));
  edit(doc);
  stepJob(doc, { type: 'restored', at: T0 + 2000, available: new Set(Object.keys(doc.nodes)) });
  return doc;
}

interface Expect {
  to?: NodeJobStatus;
  abort?: true;
  ignored?: string;
  /** What the feed says of node a (reference 5.4, 5.5): `quorum_vote success`, `run_start`, ... */
  note?: string;
}
const LATE: Expect = { ignored: 'late_answer' };
const LATE_ABORT: Expect = { abort: true, ignored: 'late_answer' };
const DUPLICATE: Expect = { ignored: 'duplicate_answer' };
const vote = (status: string, e: Expect = {}): Expect => ({ ...e, note: `quorum_vote a:${status}` });
const ran = (status: string, e: Expect = {}): Expect => ({ ...e, note: `run_complete a:${status}` });

const votingTable: Record<NodeEventType, Record<'new' | 'ready' | 'terminal', Expect>> = {
  ack_commit: {
    new: vote('success', { to: 'ready' }),
    ready: vote('unexpected_commit', DUPLICATE),
    terminal: vote('client_died_while_voting', LATE_ABORT),
  },
  nack_commit: {
    new: vote('failure', { to: 'nacked' }),
    ready: vote('lost_availibility', { to: 'unavailable' }),
    terminal: vote('client_died_while_voting', LATE),
  },
  ack_run: { new: { to: 'unavailable', abort: true }, ready: { to: 'unavailable', abort: true }, terminal: LATE_ABORT },
  nack_run: { new: { to: 'unavailable' }, ready: { to: 'unavailable' }, terminal: LATE },
  succeeded: { new: { to: 'unavailable' }, ready: { to: 'unavailable' }, terminal: LATE },
  failed: { new: { to: 'unavailable' }, ready: { to: 'unavailable' }, terminal: LATE },
  aborted: { new: { to: 'unavailable' }, ready: { to: 'unavailable' }, terminal: LATE },
  node_down: {
    new: vote('down', { to: 'unavailable' }),
    ready: vote('down', { to: 'unavailable' }),
    terminal: vote('down'),
  },
};

const runningTable: Record<NodeEventType, Record<'ready' | 'running' | 'terminal', Expect>> = {
  ack_commit: {
    ready: DUPLICATE,
    running: DUPLICATE,
    terminal: ran('client_died_while_running', LATE_ABORT),
  },
  nack_commit: {
    ready: ran('crashed', { to: 'crashed' }),
    running: ran('crashed', { to: 'crashed' }),
    terminal: ran('client_died_while_running', LATE),
  },
  ack_run: {
    ready: { to: 'running', note: 'run_start a' },
    running: DUPLICATE,
    terminal: ran('client_died_while_running', LATE_ABORT),
  },
  nack_run: {
    ready: ran('run_nacked', { to: 'crashed' }),
    running: ran('run_nacked_while_running', { to: 'crashed' }),
    terminal: ran('client_died_while_running', LATE),
  },
  succeeded: {
    ready: ran('success', { to: 'succeeded' }),
    running: ran('success', { to: 'succeeded' }),
    terminal: ran('client_died_while_running', LATE),
  },
  failed: {
    ready: ran('failure', { to: 'failed' }),
    running: ran('failure', { to: 'failed' }),
    terminal: ran('client_died_while_running', LATE),
  },
  aborted: {
    ready: ran('aborted', { to: 'aborted' }),
    running: ran('aborted', { to: 'aborted' }),
    terminal: ran('client_died_while_running', LATE),
  },
  node_down: { ready: ran('crashed', { to: 'crashed' }), running: ran('crashed', { to: 'crashed' }), terminal: {} },
};

type Tap = Parameters<Parameters<typeof t.test>[0]>[0];

function checkCell(t: Tap, s: JobState, event: NodeEventType, expect: Expect, phase: 'voting' | 'running'): void {
  const before = s.nodes.a;
  const updated = s.updated_at;
  const effects = run(s, nodeEvent(event, 'a', T0 + 5000));
  t.equal(s.nodes.a, expect.to ?? before, `node a becomes ${expect.to ?? before}`);
  t.same(sent(effects, 'abort'), expect.abort ? ['a'] : undefined, expect.abort ? 'a is told to abort' : 'no abort');
  t.same(reasons(effects), expect.ignored ? [expect.ignored] : [], 'ignored reason');
  t.equal(types(effects).includes('persist'), expect.to !== undefined, 'persisted only when a node moved');
  const told = [...(expect.note === undefined ? [] : [expect.note]), ...(expect.abort ? ['rehab a'] : [])];
  t.same(notes(effects), told, `the feed says ${told.join(', ') || 'nothing'}`);
  t.equal(s.status, phase, `the job stays ${phase} while b has not finished`);
  t.equal(s.updated_at, updated, 'updated_at only follows the job status');
}

t.test('voting table: one case per cell', async (t) => {
  for (const event of nodeEvents) {
    for (const bucket of ['new', 'ready', 'terminal'] as const) {
      t.test(`${event} from a ${bucket} node`, async (t) => {
        const s = started(['a', 'b']);
        if (bucket === 'ready') run(s, nodeEvent('ack_commit', 'a'));
        if (bucket === 'terminal') run(s, nodeEvent('nack_commit', 'a'));
        checkCell(t, s, event, votingTable[event][bucket], 'voting');
      });
    }
  }
});

t.test('running table: one case per cell', async (t) => {
  for (const event of nodeEvents) {
    for (const bucket of ['ready', 'running', 'terminal'] as const) {
      t.test(`${event} from a ${bucket} node`, async (t) => {
        const s = started(['a', 'b']);
        run(s, nodeEvent('ack_commit', 'a'), nodeEvent('ack_commit', 'b'));
        t.equal(s.status, 'running');
        if (bucket !== 'ready') run(s, nodeEvent('ack_run', 'a'));
        if (bucket === 'terminal') run(s, nodeEvent('succeeded', 'a'));
        // The terminal node here succeeded: the same result again is a duplicate, ahead of the table.
        const expect = bucket === 'terminal' && event === 'succeeded' ? DUPLICATE : runningTable[event][bucket];
        checkCell(t, s, event, expect, 'running');
      });
    }
  }
});

t.test('a result sent again is a duplicate: nothing moves or is told, while running or once finished', async (t) => {
  const s = started(['a', 'b']);
  run(s, nodeEvent('ack_commit', 'a'), nodeEvent('ack_commit', 'b'), nodeEvent('ack_run', 'a'));
  run(s, nodeEvent('ack_run', 'b'), { type: 'failed', node: 'a', at: T0 + 5000, exit_status: 3 });
  const again = run(s, { type: 'failed', node: 'a', at: T0 + 6000, exit_status: 3 });
  t.same(types(again), ['ignored'], 'no persist, no send');
  t.same(reasons(again), ['duplicate_answer']);
  t.same(notes(again), [], 'the feed does not say the client died');
  t.equal(s.exit_status.a, 3);
  run(s, nodeEvent('succeeded', 'b'));
  t.equal(s.status, 'complete');
  const late = run(s, nodeEvent('succeeded', 'b', T0 + 9000));
  t.same([types(late), reasons(late), notes(late)], [['ignored'], ['duplicate_answer'], []], 'once finished too');
  const other = run(s, nodeEvent('succeeded', 'a', T0 + 9000));
  t.same(notes(other), ['run_complete a:client_died_while_running'], 'another result than the one held is late');
});

t.test('a terminal node never moves', async (t) => {
  for (const status of terminalNodeStatuses) {
    const voting = restoredWith(started(['a', 'b']), (doc) => (doc.nodes.a = status));
    const running = started(['a', 'b']);
    run(running, nodeEvent('ack_commit', 'a'), nodeEvent('ack_commit', 'b'), nodeEvent('ack_run', 'b'));
    const runningDoc = restoredWith(running, (doc) => (doc.nodes.a = status));
    const finished = restoredWith(running, (doc) => {
      doc.status = 'complete';
      doc.nodes = { a: status, b: 'succeeded' };
    });
    for (const [phase, s] of [
      ['voting', voting],
      ['running', runningDoc],
      ['finished', finished],
    ] as const) {
      for (const event of nodeEvents) {
        const effects = run(s, nodeEvent(event, 'a'));
        t.equal(s.nodes.a, status, `${status} stays on ${event} while ${phase}`);
        t.notOk(types(effects).includes('persist'), `${status}, ${event}, ${phase}: nothing to persist`);
      }
    }
  }
});

t.test('every move in the tables goes to a later stage, so a later stage is always the newer news', async (t) => {
  // The dashboard keeps the later of an event and a fetched panel by stage: a move back would show an old status.
  const bucketStage = { waiting: 0, new: 1, ready: 2, running: 3, terminal: 4 } as const;
  const tables: [string, Record<string, Partial<Record<keyof typeof bucketStage, Cell>>>][] = [
    ['voting', VOTING],
    ['running', RUNNING],
    ['crash', { crash: CRASH }],
    ['waves', WAVES],
  ];
  let moves = 0;
  for (const [name, table] of tables) {
    for (const [event, row] of Object.entries(table)) {
      for (const [bucket, cell] of Object.entries(row) as [keyof typeof bucketStage, Cell][]) {
        if (cell.to === undefined) continue;
        moves += 1;
        t.ok(
          NODE_JOB_STAGE[cell.to] > bucketStage[bucket],
          `${name}: ${event} takes a ${bucket} node to ${cell.to}, a later stage`,
        );
      }
    }
  }
  t.ok(moves > 20, `${moves} moves checked`);
  t.equal(NODE_JOB_STAGE.waiting, bucketStage.waiting);
  t.equal(NODE_JOB_STAGE.skipped, bucketStage.terminal);
  t.equal(NODE_JOB_STAGE.new, bucketStage.new);
  t.equal(NODE_JOB_STAGE.ready, bucketStage.ready);
  t.equal(NODE_JOB_STAGE.running, bucketStage.running);
  for (const status of terminalNodeStatuses) t.equal(NODE_JOB_STAGE[status], bucketStage.terminal, status);
});

t.test('voting_timeout: unanswered nodes become unavailable, then quorum decides', async (t) => {
  t.test('quorum met: run goes to the ready nodes', async (t) => {
    const s = started(['a', 'b', 'c'], 1);
    run(s, nodeEvent('ack_commit', 'b'), nodeEvent('nack_commit', 'c'));
    const effects = run(s, { type: 'voting_timeout', at: VOTING_DEADLINE });
    t.same(jobNodesByStatus(s), { unavailable: ['a'], ready: ['b'], nacked: ['c'] });
    t.equal(s.status, 'running');
    t.same(types(effects), ['persist', 'send abort', 'send run', 'arm']);
    t.same(sent(effects, 'abort'), ['a']);
    t.same(sent(effects, 'run'), ['b']);
    t.same(effects.at(-1), { type: 'arm', timer: 'run', at: VOTING_DEADLINE + RUN_TIMEOUT * 1000 });
  });
  t.test('quorum missed: ready nodes become was_ready and are told to abort', async (t) => {
    const s = started(['a', 'b', 'c'], 2);
    run(s, nodeEvent('ack_commit', 'b'), nodeEvent('nack_commit', 'c'));
    const effects = run(s, { type: 'voting_timeout', at: VOTING_DEADLINE });
    t.same(jobNodesByStatus(s), { unavailable: ['a'], was_ready: ['b'], nacked: ['c'] });
    t.equal(s.status, 'quorum_failed');
    t.equal(s.updated_at, VOTING_DEADLINE);
    t.same(sent(effects, 'abort'), ['a', 'b']);
    t.same(types(effects), ['persist', 'send abort', 'finished']);
  });
});

t.test('votingDone: the last answer decides the quorum at once', async (t) => {
  const s = started(['a', 'b', 'c'], 3);
  run(s, nodeEvent('ack_commit', 'a'), nodeEvent('ack_commit', 'b'));
  const effects = run(s, nodeEvent('nack_commit', 'c'));
  t.equal(s.status, 'quorum_failed');
  t.same(jobNodesByStatus(s), { was_ready: ['a', 'b'], nacked: ['c'] });
  t.same(sent(effects, 'abort'), ['a', 'b']);
  t.same(effects.at(-1), { type: 'finished', status: 'quorum_failed' });
});

t.test('a job runs start to finish: commit, run, results, complete', async (t) => {
  const s = job(['b', 'a', 'c'], 2);
  t.equal(s.status, 'new');
  let effects = run(s, { type: 'start', at: T0, available: new Set(['a', 'b', 'c']) });
  t.equal(s.status, 'voting');
  t.same(
    effects.find((e) => e.type === 'feed'),
    {
      type: 'feed',
      at: T0,
      notes: [
        {
          event: 'start',
          data: {
            command: 'chef-client',
            run_timeout: RUN_TIMEOUT,
            quorum: 2,
            node_count: 3,
            dir: '/tmp',
            capture: true,
          },
        },
      ],
    },
    'the feed starts with the job',
  );
  t.same(
    effects.filter((e) => e.type !== 'feed'),
    [
      { type: 'persist', job: true, nodes: [] },
      {
        type: 'send',
        message: 'commit',
        nodes: ['b', 'a', 'c'],
        job_id: 'job1',
        command: 'chef-client',
        options: { capture: true, dir: '/tmp' },
        run_timeout: RUN_TIMEOUT,
        vote_by: VOTING_DEADLINE,
      },
      { type: 'arm', timer: 'voting', at: VOTING_DEADLINE },
    ],
  );
  run(s, nodeEvent('ack_commit', 'a'), nodeEvent('ack_commit', 'b'));
  effects = run(s, nodeEvent('nack_commit', 'c', T0 + 3000));
  t.equal(s.status, 'running');
  t.equal(s.updated_at, T0 + 3000, 'updated_at is when the job entered running');
  t.same(sent(effects, 'run'), ['b', 'a']);
  t.same(notes(effects), ['quorum_vote c:failure', 'quorum_succeeded']);
  t.equal(s.run_deadline, T0 + 3000 + RUN_TIMEOUT * 1000);
  run(s, nodeEvent('ack_run', 'a'), nodeEvent('ack_run', 'b'));
  effects = run(s, { type: 'succeeded', node: 'a', at: T0 + 9000, exit_status: 0, output: true });
  t.same(types(effects), ['save_output', 'persist'], 'output is saved before the result is persisted');
  effects = run(s, { type: 'failed', node: 'b', at: T0 + 10_000, exit_status: 3 });
  t.equal(s.status, 'complete');
  t.equal(s.updated_at, T0 + 10_000);
  t.same(types(effects), ['persist', 'finished']);
  t.same(notes(effects), ['run_complete b:failure', 'job_complete complete']);
  t.same({ ...s.exit_status }, { a: 0, b: 3 });
  t.same(jobNodesByStatus(s), { succeeded: ['a'], failed: ['b'], nacked: ['c'] });
});

t.test('output from an answer the job refuses is not kept', async (t) => {
  const s = started(['a', 'b'], 2);
  const effects = run(s, { type: 'succeeded', node: 'a', at: T0 + 4000, exit_status: 0, output: true });
  t.equal(s.nodes.a, 'unavailable', 'a result while the job still votes is out of order');
  t.notOk(types(effects).includes('save_output'));
  t.same({ ...s.exit_status }, {});
});

t.test("a result whose node's ack_run was never recorded counts, with its output", async (t) => {
  const s = started(['a', 'b'], 2);
  run(s, nodeEvent('ack_commit', 'a'), nodeEvent('ack_commit', 'b'));
  // The ack_run was lost on the way, or with the process that owned the job before a take-over.
  const effects = run(s, { type: 'succeeded', node: 'a', at: T0 + 4000, exit_status: 0, output: true });
  t.equal(s.nodes.a, 'succeeded', 'the node ran the command: a client reports only what it ran');
  t.ok(types(effects).includes('save_output'));
  t.same({ ...s.exit_status }, { a: 0 });
});

t.test('run_timeout: ready and running nodes time out and are told to abort', async (t) => {
  const s = started(['a', 'b', 'c'], 3);
  run(s, nodeEvent('ack_commit', 'a'), nodeEvent('ack_commit', 'b'), nodeEvent('ack_commit', 'c'));
  run(s, nodeEvent('ack_run', 'b'), nodeEvent('ack_run', 'c'), nodeEvent('succeeded', 'c'));
  const deadline = s.run_deadline ?? 0;
  const effects = run(s, { type: 'run_timeout', at: deadline });
  t.equal(s.status, 'timed_out');
  t.equal(s.updated_at, deadline);
  t.same(jobNodesByStatus(s), { timed_out: ['a', 'b'], succeeded: ['c'] });
  t.same(types(effects), ['persist', 'send abort', 'finished']);
  t.same(sent(effects, 'abort'), ['a', 'b']);
});

t.test('user abort', async (t) => {
  t.test('while voting: every node still in the job ends aborted', async (t) => {
    const s = started(['a', 'b', 'c']);
    run(s, nodeEvent('ack_commit', 'b'), nodeEvent('nack_commit', 'c'));
    const effects = run(s, { type: 'abort', at: T0 + 7000 });
    t.equal(s.status, 'aborted');
    t.equal(s.updated_at, T0 + 7000);
    t.same(jobNodesByStatus(s), { aborted: ['a', 'b'], nacked: ['c'] });
    t.same(types(effects), ['persist', 'send abort', 'finished']);
    t.same(sent(effects, 'abort'), ['a', 'b']);
  });
  t.test('while running: ready and running nodes end aborted, finished ones keep their result', async (t) => {
    const s = started(['a', 'b', 'c']);
    run(s, nodeEvent('ack_commit', 'a'), nodeEvent('ack_commit', 'b'), nodeEvent('ack_commit', 'c'));
    run(s, nodeEvent('ack_run', 'b'), nodeEvent('ack_run', 'c'), nodeEvent('failed', 'c'));
    const effects = run(s, { type: 'abort', at: T0 + 7000 });
    t.equal(s.status, 'aborted');
    t.same(jobNodesByStatus(s), { aborted: ['a', 'b'], failed: ['c'] });
    t.same(sent(effects, 'abort'), ['a', 'b']);
  });
  t.test('a finished job cannot be aborted: rejected, nothing changes', async (t) => {
    const s = started(['a']);
    run(s, nodeEvent('nack_commit', 'a'));
    const before = JSON.stringify(s);
    const effects = run(s, { type: 'abort', at: T0 + 7000 });
    t.same(effects, [{ type: 'rejected', error: 'job_finished', status: 'quorum_failed' }]);
    t.equal(JSON.stringify(s), before);
  });
  t.test('a job not started yet is rejected too', async (t) => {
    const s = job(['a']);
    t.same(run(s, { type: 'abort', at: T0 }), [{ type: 'rejected', error: 'not_started', status: 'new' }]);
    t.equal(s.status, 'new');
  });
});

t.test('quorum', async (t) => {
  t.test('resolveQuorum turns counts and percentages into a count, rounding up', async (t) => {
    t.equal(resolveQuorum(undefined, 7), 7, 'default is 100%');
    t.equal(resolveQuorum('100%', 7), 7);
    t.equal(resolveQuorum('50%', 3), 2);
    t.equal(resolveQuorum('10%', 30), 3, 'no floating-point overshoot');
    t.equal(resolveQuorum('33.3%', 3), 1);
    t.equal(resolveQuorum(' 0% ', 5), 0);
    t.equal(resolveQuorum('150%', 2), 3, 'more than the nodes: accepted, always fails');
    t.equal(resolveQuorum(2, 5), 2);
    t.equal(resolveQuorum(2.5, 5), 3);
    t.equal(resolveQuorum('4', 5), 4);
    t.equal(resolveQuorum(0, 5), 0);
    for (const bad of ['half', '-1', '%', '50 %', -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      t.throws(() => resolveQuorum(bad, 5), RangeError, `${String(bad)} is refused`);
    }
  });
  t.test('the job proceeds on the acknowledging nodes when they reach the quorum', async (t) => {
    const s = started(['a', 'b', 'c'], resolveQuorum('50%', 3));
    const effects = run(s, nodeEvent('ack_commit', 'a'), nodeEvent('nack_commit', 'b'), nodeEvent('ack_commit', 'c'));
    t.equal(s.status, 'running');
    t.same(sent(effects, 'run'), ['a', 'c']);
  });
  t.test('voting waits for every node even once the quorum is reached', async (t) => {
    const s = started(['a', 'b'], 1);
    run(s, nodeEvent('ack_commit', 'a'));
    t.equal(s.status, 'voting');
  });
  t.test('newJob refuses a quorum that is not a resolved count', async (t) => {
    t.throws(() => job(['a'], 1.5), RangeError);
    t.throws(() => job(['a'], -1), RangeError);
  });
});

t.test('nodes not available at start', async (t) => {
  t.test('are unavailable at once and get no commit', async (t) => {
    const s = job(['a', 'b'], 1);
    const effects = run(s, { type: 'start', at: T0, available: new Set(['a']) });
    t.same(jobNodesByStatus(s), { new: ['a'], unavailable: ['b'] });
    t.same(sent(effects, 'commit'), ['a']);
  });
  t.test('all of them: quorum_failed immediately', async (t) => {
    const s = job(['a', 'b'], 1);
    const effects = run(s, { type: 'start', at: T0, available: new Set() });
    t.equal(s.status, 'quorum_failed');
    t.same(jobNodesByStatus(s), { unavailable: ['a', 'b'] });
    t.same(types(effects), ['persist', 'finished'], 'no commit, no timer');
  });
  t.test('all of them with quorum 0: complete immediately, nothing sent', async (t) => {
    const s = job(['a', 'b'], 0);
    const effects = run(s, { type: 'start', at: T0, available: new Set() });
    t.equal(s.status, 'complete');
    t.same(types(effects), ['persist', 'finished']);
  });
  t.test('quorum 0 and every node refuses: complete, no run', async (t) => {
    const s = started(['a'], 0);
    const effects = run(s, nodeEvent('nack_commit', 'a'));
    t.equal(s.status, 'complete');
    t.equal(sent(effects, 'run'), undefined);
  });
});

t.test('stale timers are ignored', async (t) => {
  const s = started(['a', 'b']);
  t.same(reasons(run(s, { type: 'voting_timeout', at: VOTING_DEADLINE - 1 })), ['stale_timer'], 'wrong deadline');
  t.same(reasons(run(s, { type: 'run_timeout', at: VOTING_DEADLINE })), ['stale_timer'], 'run timer while voting');
  run(s, nodeEvent('ack_commit', 'a'), nodeEvent('ack_commit', 'b'));
  t.same(reasons(run(s, { type: 'voting_timeout', at: VOTING_DEADLINE })), ['stale_timer'], 'voting timer, running');
  t.same(reasons(run(s, { type: 'run_timeout', at: (s.run_deadline ?? 0) - 1 })), ['stale_timer']);
  t.same({ ...s.nodes }, { a: 'ready', b: 'ready' });
  t.equal(s.status, 'running');
});

t.test('misbehaving peers are ignored, never thrown at', async (t) => {
  const s = started(['a', '__proto__']);
  t.same(run(s, nodeEvent('ack_commit', 'constructor')), [
    { type: 'ignored', reason: 'unknown_node', event: 'ack_commit', node: 'constructor' },
  ]);
  t.same(reasons(run(s, nodeEvent('ack_commit', 'toString'))), ['unknown_node']);
  t.same(reasons(run(s, { type: 'start', at: T0, available: new Set() })), ['already_started']);
  run(s, nodeEvent('ack_commit', 'a'), nodeEvent('ack_commit', '__proto__'));
  t.equal(s.status, 'running', 'a node named __proto__ is an ordinary node');
  t.same(reasons(run(job(['a']), nodeEvent('ack_commit', 'a'))), ['not_started']);
});

t.test('a broken invariant throws', async (t) => {
  const s = restoredWith(started(['a', 'b']), (doc) => (doc.nodes.a = 'running'));
  t.throws(() => stepJob(s, nodeEvent('ack_commit', 'a')), /running while the job is voting/);
});

t.test('restored after a server restart', async (t) => {
  t.test('a job never started is crashed, its nodes unavailable', async (t) => {
    const s = jobStateSchema.parse(JSON.parse(JSON.stringify(job(['a', 'b']))));
    const effects = run(s, { type: 'restored', at: T0 + 5000, available: new Set(['a', 'b']) });
    t.equal(s.status, 'crashed');
    t.equal(s.updated_at, T0 + 5000);
    t.same(jobNodesByStatus(s), { unavailable: ['a', 'b'] });
    t.same(types(effects), ['persist', 'finished']);
  });
  t.test('voting goes on with its original deadline', async (t) => {
    const s = started(['a', 'b']);
    run(s, nodeEvent('ack_commit', 'a'));
    const doc = jobStateSchema.parse(JSON.parse(JSON.stringify(s)));
    const effects = run(doc, { type: 'restored', at: T0 + 5000, available: new Set(['a', 'b']) });
    t.same(
      effects,
      [
        {
          type: 'send',
          message: 'commit',
          nodes: ['b'],
          job_id: 'job1',
          command: 'chef-client',
          options: { capture: true, dir: '/tmp' },
          run_timeout: RUN_TIMEOUT,
          vote_by: VOTING_DEADLINE,
        },
        { type: 'arm', timer: 'voting', at: VOTING_DEADLINE },
      ],
      'nothing to persist; the node yet to vote is asked again, its commit may have been lost with the server',
    );
    run(doc, nodeEvent('ack_commit', 'b', T0 + 6000));
    t.equal(doc.status, 'running');
  });
  t.test('voting: nodes no longer available count as down', async (t) => {
    const s = started(['a', 'b', 'c'], 1);
    run(s, nodeEvent('ack_commit', 'a'));
    const doc = jobStateSchema.parse(JSON.parse(JSON.stringify(s)));
    const effects = run(doc, { type: 'restored', at: T0 + 5000, available: new Set(['a']) });
    t.same(jobNodesByStatus(doc), { ready: ['a'], unavailable: ['b', 'c'] });
    t.equal(doc.status, 'running', 'nobody left to wait for, and a meets the quorum');
    t.same(types(effects), ['persist', 'send run', 'arm']);
  });
  t.test('running goes on with its deadline; lost nodes are crashed', async (t) => {
    const s = started(['a', 'b']);
    run(s, nodeEvent('ack_commit', 'a'), nodeEvent('ack_commit', 'b'));
    run(s, nodeEvent('ack_run', 'a'), nodeEvent('ack_run', 'b'));
    const doc = jobStateSchema.parse(JSON.parse(JSON.stringify(s)));
    const effects = run(doc, { type: 'restored', at: T0 + 5000, available: new Set(['a']) });
    t.same(jobNodesByStatus(doc), { running: ['a'], crashed: ['b'] });
    t.same(types(effects), ['persist', 'arm']);
    t.same(
      effects.find((e) => e.type === 'arm'),
      { type: 'arm', timer: 'run', at: s.run_deadline },
    );
    run(doc, nodeEvent('succeeded', 'a', T0 + 8000));
    t.equal(doc.status, 'complete');
  });
  t.test('running with every node lost completes at once', async (t) => {
    const s = started(['a']);
    run(s, nodeEvent('ack_commit', 'a'), nodeEvent('ack_run', 'a'));
    const doc = jobStateSchema.parse(JSON.parse(JSON.stringify(s)));
    const effects = run(doc, { type: 'restored', at: T0 + 5000, available: new Set() });
    t.equal(doc.status, 'complete');
    t.same(jobNodesByStatus(doc), { crashed: ['a'] });
    t.same(types(effects), ['persist', 'finished']);
  });
  t.test('a deadline that passed during the outage is re-armed as it was and still counts', async (t) => {
    const s = started(['a', 'b'], 1);
    run(s, nodeEvent('ack_commit', 'a'));
    const doc = jobStateSchema.parse(JSON.parse(JSON.stringify(s)));
    t.same(run(doc, { type: 'restored', at: VOTING_DEADLINE + 30_000, available: new Set(['a', 'b']) }), [
      {
        type: 'send',
        message: 'commit',
        nodes: ['b'],
        job_id: 'job1',
        command: 'chef-client',
        options: { capture: true, dir: '/tmp' },
        run_timeout: RUN_TIMEOUT,
        vote_by: VOTING_DEADLINE,
      },
      { type: 'arm', timer: 'voting', at: VOTING_DEADLINE },
    ]);
    run(doc, { type: 'voting_timeout', at: VOTING_DEADLINE });
    t.equal(doc.status, 'running');
  });
  t.test('a finished job stays as it is', async (t) => {
    const s = started(['a']);
    run(s, nodeEvent('nack_commit', 'a'));
    const doc = jobStateSchema.parse(JSON.parse(JSON.stringify(s)));
    t.same(run(doc, { type: 'restored', at: T0 + 5000, available: new Set() }), []);
    t.equal(doc.status, 'quorum_failed');
  });
});

t.test('isFinished and jobNodesByStatus', async (t) => {
  const all = ['new', 'voting', 'running', 'complete', 'quorum_failed', 'crashed', 'timed_out', 'aborted'] as const;
  t.same(all.filter(isFinished), ['complete', 'quorum_failed', 'crashed', 'timed_out', 'aborted']);
  const s = started(['zeta', 'alpha', 'mid'], 1, ['alpha', 'zeta']);
  t.same(jobNodesByStatus(s), { new: ['alpha', 'zeta'], unavailable: ['mid'] }, 'sorted, empty statuses left out');
  // Names that read as numbers are listed first by for...in, whatever order they were added in.
  const odd = started(['b', '10', '__proto__', '9', 'a-1', 'A'], 1, ['10', 'A', 'b']);
  const sorted = Object.keys(odd.nodes).sort();
  t.same(
    jobNodesByStatus(odd, sorted),
    { new: ['10', 'A', 'b'], unavailable: ['9', '__proto__', 'a-1'] },
    'with the names sorted once beforehand, the same lists',
  );
  t.same(jobNodesByStatus(odd, sorted), jobNodesByStatus(odd), 'as sorting each list');
});

t.test('crash: the job ends crashed and lets every unfinished node go, whatever its phase', async (t) => {
  t.test('voting: new nodes are unavailable, ready ones were ready, finished ones stay', async (t) => {
    const s = started(['a', 'b', 'c']);
    run(s, nodeEvent('ack_commit', 'a'), nodeEvent('nack_commit', 'c'));
    const effects = run(s, { type: 'crash', at: T0 + 2000 });
    t.equal(s.status, 'crashed');
    t.equal(s.updated_at, T0 + 2000);
    t.same(jobNodesByStatus(s), { was_ready: ['a'], unavailable: ['b'], nacked: ['c'] });
    t.same(
      effects.filter((e) => e.type !== 'feed'),
      [
        { type: 'persist', job: true, nodes: ['a', 'b'] },
        { type: 'send', message: 'abort', nodes: ['a', 'b'], job_id: 'job1' },
        { type: 'finished', status: 'crashed' },
      ],
    );
    t.same(notes(effects), ['rehab a', 'rehab b', 'job_complete crashed'], 'the feed ends with the crash');
  });
  t.test('running: running nodes crashed; counts are rebuilt, not trusted', async (t) => {
    const s = started(['a', 'b']);
    run(s, nodeEvent('ack_commit', 'a'), nodeEvent('ack_commit', 'b'), nodeEvent('ack_run', 'a'));
    s.counts.running = 99; // a half-stepped state
    run(s, { type: 'crash', at: T0 + 2000 });
    t.same(jobNodesByStatus(s), { crashed: ['a'], was_ready: ['b'] });
    t.equal(s.counts.crashed, 1);
    t.equal(s.counts.running, 0);
  });
  t.test('a broken phase (a node running while voting) does not stop the crash', async (t) => {
    const s = started(['a', 'b']);
    s.nodes.a = 'running';
    t.throws(() => stepJob(s, nodeEvent('ack_commit', 'a')), 'the invariant check throws');
    run(s, { type: 'crash', at: T0 + 2000 });
    t.equal(s.status, 'crashed');
    t.same(jobNodesByStatus(s), { crashed: ['a'], unavailable: ['b'] });
  });
  t.test('a finished job is not crashed again', async (t) => {
    const s = started(['a']);
    run(s, nodeEvent('nack_commit', 'a'));
    t.same(run(s, { type: 'crash', at: T0 + 2000 }), [{ type: 'ignored', reason: 'already_finished', event: 'crash' }]);
    t.equal(s.status, 'quorum_failed');
  });
});

t.test('persist names what changed: the job-level fields, and each node that moved', async (t) => {
  const s = started(['a', 'b', 'c']);
  t.same(run(s, nodeEvent('ack_commit', 'a'))[0], { type: 'persist', job: false, nodes: ['a'] }, 'one vote: one node');
  const last = run(s, nodeEvent('ack_commit', 'b'), nodeEvent('ack_commit', 'c'));
  t.same(last[0], { type: 'persist', job: true, nodes: ['c'] }, 'the vote that starts the run: that node and the job');
});

t.test('a node reached at another gateway while voting and undecided is asked again; otherwise nothing', async (t) => {
  const s = started(['a', 'b']);
  const reached = (node: string): JobEvent => ({ type: 'node_reached', at: T0 + 500, node });
  t.match(run(s, reached('a')), [{ type: 'send', message: 'commit', nodes: ['a'] }], 'undecided: the commit again');
  run(s, nodeEvent('ack_commit', 'a'));
  t.same(run(s, reached('a')), [], 'a vote given: nothing');
  t.same(run(s, reached('nobody')), [], 'a node not in the job: nothing');
  run(s, nodeEvent('ack_commit', 'b'));
  t.equal(s.status, 'running');
  t.same(run(s, reached('b')), [], 'running: nothing');
});
