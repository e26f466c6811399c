// The commits a node's machine awaits it to answer, with explicit times: a commit written with a voting deadline is
// awaited until the node answers for its job, is written anything else for it, the write reached no connection, the
// node goes down or is sent a rehab abort; each heartbeat is read against them (vote-recovery.ts), so that a commit
// lost on the way is written again and a lost ack is taken from the beat; a node awaiting none allocates nothing.
import t from 'tap';
import type { CommitMessage } from '../../actors/push/awaited-commits.js';
import {
  newNode,
  restarted,
  stepNode,
  type JobHeld,
  type NodeConfig,
  type NodeEffect,
  type NodeEvent,
  type NodeState,
  type NodeStep,
} from '../../actors/push/node-machine.js';
import { NO_LAG, type OutboundMessage } from '../../actors/push/ports.js';
import type { ClientJobState } from '../../src/protocol/messages.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const I = 1000;
const config: NodeConfig = { heartbeat_interval: I, offline_threshold: 3, online_threshold: 2 };
/** The offline window: a commit unanswered this long was lost, or its answer was. */
const WINDOW = 3 * I;
/** When the jobs below stop counting votes. */
const VOTE_BY = T0 + 60 * I;
/** When the commits below are written. */
const WRITTEN = T0 + 2 * I;

type Beat = Extract<NodeEvent, { type: 'heartbeat' }>;
const hb = (at: number, job_id: string | null = null, job_state: ClientJobState = 'idle', job?: JobHeld): Beat => ({
  type: 'heartbeat',
  at,
  incarnation: 'inc-1',
  job: job ?? (job_id === null ? 'none' : 'known'),
  job_id,
  job_state,
  sequence: at - T0,
  lag: NO_LAG,
});
const commit = (job: string): CommitMessage => ({ type: 'commit', job_id: job, command: 'c', run_timeout: 60 });
/** The transport wrote `message`: a commit with VOTE_BY for its deadline, unless it has `none`. */
const written = (message: OutboundMessage, at = WRITTEN, voteBy: number | 'none' = VOTE_BY): NodeEvent => ({
  type: 'written',
  at,
  message,
  voteBy: voteBy === 'none' ? undefined : voteBy,
});

function run(state: NodeState, ...events: NodeEvent[]): NodeStep {
  let step: NodeStep = { state, effects: [] };
  for (const event of events) step = stepNode(step.state, event);
  return step;
}

/** Up and available (its rehab abort answered); last heartbeat at T0 + I. */
function available(): NodeState {
  const beat = (at: number) => hb(at);
  const aborted: NodeEvent = {
    type: 'answer',
    at: T0 + I + 10,
    answer: 'aborted',
    job_id: null,
    job: 'none',
    sequence: 1010,
  };
  return run(newNode({ node_name: 'web1', config, at: T0 }), beat(T0), beat(T0 + I), aborted).state;
}

/** Available, awaiting the commits of `jobs`, written at WRITTEN. */
function awaiting(...jobs: string[]): { state: NodeState; commits: CommitMessage[] } {
  const commits = jobs.map(commit);
  const state = run(available(), ...commits.map((c) => written(c))).state;
  return { state, commits };
}

const awaited = (s: NodeState): string[] => [...(s.awaiting?.keys() ?? [])];
const resend = (message: CommitMessage): NodeEffect => ({ type: 'resend_commit', message, voteBy: VOTE_BY });
const ack = (job_id: string, at: number, forward = true): NodeEffect => ({
  type: 'ack_from_heartbeat',
  job_id,
  at,
  forward,
});
/** Past the offline window since WRITTEN; the node's heartbeats kept it up. */
const LATE = WRITTEN + WINDOW;

t.test('a commit written with a voting deadline is awaited, from when it was written; nothing else is', async (t) => {
  const s = available();
  const step = stepNode(s, written(commit('j1')));
  t.equal(step.state, s, 'bookkeeping: the same state object');
  t.same(step.effects, []);
  t.match(s.awaiting?.get('j1'), { writtenAt: WRITTEN, voteBy: VOTE_BY });
  t.equal(stepNode(available(), written(commit('j1'), WRITTEN, 'none')).state.awaiting, undefined, 'no deadline');
  t.equal(stepNode(available(), written({ type: 'run', job_id: 'j1' })).state.awaiting, undefined, 'a run');
});

t.test('unanswered past the offline window, a beat not holding the job has the commit written again', async (t) => {
  const { state: s, commits } = awaiting('j1');
  t.same(stepNode(s, hb(LATE - 1)).effects, [], 'within the window: its answer may be on its way');
  for (const [name, beat] of [
    ['idle', hb(LATE)],
    ['holding another job', hb(LATE, 'j9', 'running')],
  ] as const) {
    const step = stepNode(s, beat);
    t.same(step.effects, [resend(commits[0] as CommitMessage)], `${name}: written again, with its deadline`);
    t.equal((step.effects[0] as { message: unknown }).message, commits[0], 'the very message written');
    t.same(awaited(step.state), ['j1'], 'still awaited');
  }
  // The transport says it wrote it again: the window starts over.
  const again = run(s, hb(LATE), written(commits[0] as CommitMessage, LATE));
  t.same(stepNode(again.state, hb(LATE + WINDOW - 1)).effects, [], 'not again within the next window');
  t.same(stepNode(again.state, hb(LATE + WINDOW)).effects, [resend(commits[0] as CommitMessage)], 'then again');
});

t.test('a beat holding the job committed is taken as its lost ack', async (t) => {
  const { state: s } = awaiting('j1');
  const step = stepNode(s, hb(LATE, 'j1', 'committed'));
  t.same(step.effects, [ack('j1', LATE)], 'the ack goes on to the job');
  t.equal(step.state.awaiting, undefined, 'no longer awaited');
  t.same(stepNode(step.state, hb(LATE + WINDOW, 'j1', 'committed')).effects, [], 'taken once');
  t.same(stepNode(awaiting('j1').state, hb(LATE, 'j1', 'running')).effects, [], 'running it: its answers tell');
});

t.test('a beat taken as an ack counts as an answer sent with it', async (t) => {
  const { state: s } = awaiting('j1');
  const acked = stepNode(s, hb(LATE, 'j1', 'committed')).state;
  t.equal(acked.answered_through, LATE - T0, "the answers' sequence reaches the beat's");
  const older = stepNode(acked, { ...hb(LATE + 10, 'j1', 'committed', 'unknown'), sequence: LATE - T0 - 1 });
  t.same(older.effects, [], 'a beat sent before it naming a job now over is stale: no reset');
});

t.test('an ack for a job that runs no more goes nowhere, and the beat resets the node', async (t) => {
  const { state: s } = awaiting('j1');
  const step = stepNode(s, hb(LATE, 'j1', 'committed', 'unknown'));
  t.same(step.effects[0], ack('j1', LATE, false), 'counted, not forwarded');
  t.match(step.state, { rehab: true });
  t.same(
    step.effects.slice(1).map((e) => e.type),
    ['availability_changed', 'send'],
  );
});

t.test('a vote over is forgotten', async (t) => {
  const { state: s } = awaiting('j1');
  const step = stepNode(s, hb(VOTE_BY));
  t.same(step.effects, []);
  t.equal(step.state.awaiting, undefined);
});

t.test(
  'one beat settles each awaited commit by its own row, and the recoveries come before its own effects',
  async (t) => {
    const { state: s, commits } = awaiting('lost', 'acked', 'running');
    run(s, written(commit('recent'), LATE - 10), written(commit('over'), WRITTEN, LATE));
    // The client restarted: the beat also resets the node, after what it recovered.
    const step = stepNode(s, { ...hb(LATE, 'acked', 'committed'), incarnation: 'inc-2' });
    t.same(
      step.effects.map((e) => e.type),
      ['resend_commit', 'ack_from_heartbeat', 'resend_commit', 'incarnation_changed', 'availability_changed', 'send'],
    );
    t.same(step.effects.slice(0, 3), [
      resend(commits[0] as CommitMessage),
      ack('acked', LATE),
      resend(commits[2] as CommitMessage),
    ]);
    t.same(awaited(step.state), ['lost', 'running', 'recent'], 'acked and over end; the rest wait on');
  },
);

t.test('the wait ends on an answer for its job, and on anything else written for it', async (t) => {
  const ends: Array<[string, NodeEvent]> = [
    ['an ack', { type: 'answer', at: WRITTEN + 10, answer: 'ack_commit', job_id: 'j1', job: 'known', sequence: 3000 }],
    [
      'a refusal',
      { type: 'answer', at: WRITTEN + 10, answer: 'nack_commit', job_id: 'j1', job: 'known', sequence: 3000 },
    ],
    ['an answer relayed to the owner', { type: 'answer_relayed', at: WRITTEN + 10, job_id: 'j1' }],
    ['a run', written({ type: 'run', job_id: 'j1' }, WRITTEN + 10)],
    ['an abort', written({ type: 'abort', job_id: 'j1' }, WRITTEN + 10)],
    ['a result acked', written({ type: 'ack_result', job_id: 'j1' }, WRITTEN + 10)],
    ['a commit without a deadline', written(commit('j1'), WRITTEN + 10, 'none')],
  ];
  for (const [name, event] of ends) {
    const step = stepNode(awaiting('j1', 'j2').state, event);
    t.same(awaited(step.state), ['j2'], `${name}: only the other job is still awaited`);
    t.same(stepNode(step.state, hb(LATE)).effects.length, 1, `${name}: a late beat recovers j2 alone`);
  }
  const other = stepNode(awaiting('j1').state, written({ type: 'run', job_id: 'j9' }, WRITTEN + 10));
  t.same(awaited(other.state), ['j1'], 'a message for another job leaves it');
  const last = stepNode(awaiting('j1').state, written({ type: 'run', job_id: 'j1' }, WRITTEN + 10));
  t.equal(last.state.awaiting, undefined, 'the last wait ended leaves none');
});

t.test('a rehab abort ends every wait: the jobs count the node gone', async (t) => {
  const step = stepNode(awaiting('j1', 'j2').state, written({ type: 'abort', job_id: null }, WRITTEN + 10));
  t.equal(step.state.awaiting, undefined);
});

t.test('going down ends every wait', async (t) => {
  const { state: s } = awaiting('j1', 'j2');
  const down = stepNode(s, { type: 'tick', at: T0 + I + WINDOW + 1, lag: NO_LAG });
  t.match(down.state, { status: 'down', awaiting: undefined });
  t.same(
    down.effects.map((e) => e.type),
    ['availability_changed'],
    'nothing recovered on the way down',
  );
});

t.test('the commit awaited reaching no connection ends its wait; another message failing does not', async (t) => {
  const { state: s, commits } = awaiting('j1');
  for (const [name, message] of [
    ['an equal commit written separately', commit('j1')],
    ['another message for the job', { type: 'run', job_id: 'j1' } as const],
    ['a rehab abort', { type: 'abort', job_id: null } as const],
  ] as const) {
    stepNode(s, { type: 'unroutable', at: WRITTEN + 10, message });
    t.same(awaited(s), ['j1'], `${name}: still awaited`);
  }
  const step = stepNode(s, { type: 'unroutable', at: WRITTEN + 10, message: commits[0] as CommitMessage });
  t.equal(step.state.awaiting, undefined, 'the transport writes it again once the node is heard');
});

t.test('a beat allocates nothing for a node awaiting none, nor for one whose commits are recent', async (t) => {
  const none = available();
  const first = stepNode(none, hb(T0 + 2 * I));
  t.equal(first.state, none, 'the same state object');
  t.equal(stepNode(none, hb(T0 + 3 * I)), first, 'the same cached result');
  t.equal(none.awaiting, undefined, 'no waits made');
  const { state: s } = awaiting('j1');
  const recent = stepNode(s, hb(WRITTEN + 10));
  t.equal(recent.state, s);
  t.equal(stepNode(s, hb(WRITTEN + 20)), recent, 'the same cached result while the commit is recent');
});

t.test('a node restarted from a record still awaits what it awaited', async (t) => {
  const { state: s } = awaiting('j1');
  const fresh = newNode({
    node_name: 'web1',
    config,
    at: LATE,
    saved: { node_name: 'web1', status: 'up', updated_at: T0, incarnation: 'inc-1' },
  });
  const again = restarted(s, fresh);
  t.same(awaited(again), ['j1']);
  t.match(again, { status: 'up', updated_at: T0 });
  const none = newNode({ node_name: 'web1', config, at: LATE });
  t.equal(restarted(available(), none), none, 'nothing awaited: the given state as is');
});
