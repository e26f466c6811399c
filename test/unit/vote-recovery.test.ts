// The rows of vote recovery: a lost commit is written again, a lost ack is read from the heartbeat, and nothing is
// done while the answer may still be on its way or once the job counts no more votes.
import t from 'tap';
import { recoverVote, type AwaitedVote } from '../../actors/push/vote-recovery.js';

const WINDOW = 3000;
const awaited: AwaitedVote = { writtenAt: 10_000, voteBy: 70_000 };
const late = 10_000 + WINDOW;

t.test('within an offline window of the write, the answer may be on its way', async (t) => {
  t.equal(recoverVote('j1', awaited, { job_id: null, job_state: 'idle' }, late - 1, WINDOW), 'wait');
});

t.test('a node that does not hold the job lost the commit: it is written again', async (t) => {
  t.equal(recoverVote('j1', awaited, { job_id: null, job_state: 'idle' }, late, WINDOW), 'resend');
  t.equal(recoverVote('j1', awaited, { job_id: 'other', job_state: 'running' }, late, WINDOW), 'resend');
});

t.test('a node holding the job committed acked it: the heartbeat is that ack', async (t) => {
  t.equal(recoverVote('j1', awaited, { job_id: 'j1', job_state: 'committed' }, late, WINDOW), 'ack');
});

t.test('a node already running the job has nothing to recover', async (t) => {
  t.equal(recoverVote('j1', awaited, { job_id: 'j1', job_state: 'running' }, late, WINDOW), 'wait');
});

t.test('once the job counts no more votes, the vote is forgotten whatever the node holds', async (t) => {
  for (const beat of [
    { job_id: null, job_state: 'idle' as const },
    { job_id: 'j1', job_state: 'committed' as const },
  ])
    t.equal(recoverVote('j1', awaited, beat, 70_000, WINDOW), 'forget');
});
