// The commits a node is awaited to answer: a commit with a voting deadline is awaited until the node is sent
// anything else for its job (or a rehab abort), and a heartbeat says, per vote-recovery.ts, which awaited commits
// to write again, which to take as acked and which to forget.
import t from 'tap';
import type { OutboundMessage } from '../../actors/push/ports.js';
import type { ClientHeartbeat, ClientJobState } from '../../src/protocol/messages.js';
import { answered, awaits, recoveries, written, type AwaitedCommits } from '../../src/transport/awaited-commits.js';
import type { Outgoing } from '../../src/transport/unsent.js';

const WINDOW = 3000;
const VOTE_BY = 70_000;

const commit = (job: string, voteBy = VOTE_BY): Outgoing => ({
  message: { type: 'commit', job_id: job, command: 'c', run_timeout: 60 },
  at: 1000,
  voteBy,
});
const other = (message: OutboundMessage): Outgoing => ({ message, at: 1000, voteBy: undefined });

function beat(job_id: string | null, job_state: ClientJobState): ClientHeartbeat {
  return {
    type: 'heartbeat',
    org: 'o',
    node: 'n1',
    incarnation_id: '00000000-0000-4000-8000-000000000000',
    sequence: 1,
    timestamp: 'Sat, 21 Nov 2026 10:00:00 GMT',
    job_state,
    job_id,
  };
}

t.test('a commit with a voting deadline is awaited, from when it was written', async (t) => {
  const out = commit('j1');
  const awaiting = written(undefined, out, 10_000);
  t.equal(awaiting?.size, 1);
  t.same(awaiting?.get('j1'), { out, writtenAt: 10_000, voteBy: VOTE_BY });
});

t.test('a commit without a voting deadline is not awaited', async (t) => {
  t.equal(written(undefined, { ...commit('j1'), voteBy: undefined }, 10_000), undefined);
});

t.test('a second job commit is added to the same waits', async (t) => {
  const first = written(undefined, commit('j1'), 10_000);
  const both = written(first, commit('j2'), 11_000);
  t.equal(both, first, 'the same map');
  t.same([...(both?.keys() ?? [])], ['j1', 'j2']);
});

t.test('anything else sent for the job ends its wait', async (t) => {
  for (const message of [
    { type: 'run', job_id: 'j1' },
    { type: 'abort', job_id: 'j1' },
    { type: 'ack_result', job_id: 'j1' },
  ] as const) {
    const awaiting = written(written(undefined, commit('j1'), 10_000), commit('j2'), 10_000);
    const after = written(awaiting, other(message), 12_000);
    t.same([...(after?.keys() ?? [])], ['j2'], `${message.type}: only the other job is still awaited`);
  }
});

t.test('the last wait ended leaves none', async (t) => {
  const awaiting = written(undefined, commit('j1'), 10_000);
  t.equal(written(awaiting, other({ type: 'run', job_id: 'j1' }), 12_000), undefined);
});

t.test('a message for another job leaves the wait alone', async (t) => {
  const awaiting = written(undefined, commit('j1'), 10_000);
  const after = written(awaiting, other({ type: 'run', job_id: 'j9' }), 12_000);
  t.same([...(after?.keys() ?? [])], ['j1']);
});

t.test('a rehab abort (no job) ends every wait', async (t) => {
  const awaiting = written(written(undefined, commit('j1'), 10_000), commit('j2'), 10_000);
  t.equal(written(awaiting, other({ type: 'abort', job_id: null }), 12_000), undefined);
});

t.test('answered ends one wait, and returns undefined once none waits', async (t) => {
  const awaiting = written(written(undefined, commit('j1'), 10_000), commit('j2'), 10_000);
  const left = answered(awaiting, 'j1');
  t.same([...(left?.keys() ?? [])], ['j2']);
  t.equal(answered(left, 'j2'), undefined);
  t.equal(answered(undefined, 'j1'), undefined, 'nothing awaited answers nothing');
});

t.test('awaits tells whether an unroutable message is the very commit awaited', async (t) => {
  const out = commit('j1');
  const awaiting = written(undefined, out, 10_000);
  t.equal(awaits(awaiting, out), true, 'the awaited commit');
  t.equal(awaits(awaiting, commit('j1')), false, 'an equal commit written separately is not it');
  t.equal(awaits(awaiting, other({ type: 'run', job_id: 'j1' })), false, 'another message for the job');
  t.equal(awaits(awaiting, other({ type: 'abort', job_id: null })), false, 'a rehab abort');
  t.equal(awaits(undefined, out), false, 'nothing awaited');
});

t.test('a heartbeat yields resend, ack or forget for each awaited commit, and never wait', async (t) => {
  const awaiting: AwaitedCommits = new Map();
  const outs = {
    lost: commit('lost'),
    acked: commit('acked'),
    over: commit('over', 20_000),
    recent: commit('recent'),
    running: commit('running'),
  };
  written(awaiting, outs.lost, 10_000);
  written(awaiting, outs.acked, 10_000);
  written(awaiting, outs.over, 10_000);
  written(awaiting, outs.recent, 19_000);
  written(awaiting, outs.running, 10_000);
  const at = 20_000;
  // The node holds `acked` committed: only that job is held; for `running`, a second beat is read below.
  const got = [...recoveries(awaiting, beat('acked', 'committed'), at, WINDOW)];
  t.same(
    got.map(({ job, recovery }) => [job, recovery]),
    [
      ['lost', 'resend'],
      ['acked', 'ack'],
      ['over', 'forget'],
      ['running', 'resend'],
    ],
    'the recent commit is left waiting, and nothing says wait',
  );
  t.equal(got[0]?.out, outs.lost, 'each with the commit to write again');
  t.equal(got[1]?.out, outs.acked);

  const onRunning = [...recoveries(awaiting, beat('running', 'running'), at, WINDOW)].map((r) => r.job);
  t.notOk(onRunning.includes('running'), 'a node already running the job has nothing to recover');
  t.ok(onRunning.includes('lost'), 'while another commit it does not hold is still resent');
  t.equal(awaiting.size, 5, 'reading a heartbeat ends no wait itself');
});
