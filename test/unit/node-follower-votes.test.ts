// A node follower recovering a vote: its parent writes a lost commit again with its voting deadline, and the
// transport's report of that write, told while the follower's effect is still running, is kept (the interpreter
// queues it), so the next window starts from it; a beat taken as an ack goes on to the job as the node's answer would,
// and both are counted where GET /_status reads them. A gateway's follower writes to the node's connection there.
import t from 'tap';
import type { CommitMessage } from '../../actors/push/awaited-commits.js';
import { GatewayNodes } from '../../actors/push/gateway-nodes.js';
import { newNode } from '../../actors/push/node-machine.js';
import { NodeFollower, type NodeMsg, type NodeParent } from '../../actors/push/node.js';
import { NO_LAG, type NodeAnswerMessage, type OutboundMessage, type PushPorts } from '../../actors/push/ports.js';
import type { VotesRecovered } from '../../src/api/status-schema.js';
import { Counters } from '../../src/lib/counters.js';
import { recordingLogger } from '../support/logs.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const I = 1000;
const settings = { heartbeat_interval: I, offline_threshold: 3, online_threshold: 2 };
const WINDOW = 3 * I;
const VOTE_BY = T0 + 60 * I;
const COMMIT: CommitMessage = { type: 'commit', job_id: 'j1', command: 'c', run_timeout: 60 };

const SAVED = { node_name: 'web1', status: 'up', updated_at: T0, incarnation: 'inc-1' } as const;

/** What a node follower uses of its ports, counting votes into `votes` and crashes into `crashes`. */
function portsOf(votes: VotesRecovered, crashes: unknown[], now = () => T0): PushPorts {
  return {
    settings,
    now,
    lag: { lag: () => NO_LAG, downDeferred: () => {}, downMarked: () => {} },
    votes: { recovered: (how: keyof VotesRecovered) => void (votes[how] += 1) },
    counters: new Counters(),
    log: recordingLogger().logger,
    reporter: { crashed: (_actor: string, error: unknown) => void crashes.push(error) },
    timers: { after: () => () => {}, every: () => () => {} },
    store: { getFields: async () => new Map([['web1', SAVED]]) },
  } as unknown as PushPorts;
}

/** A follower of an available node whose parent writes as a transport does: it reports each write back at once. */
function fixture() {
  const votes: VotesRecovered = { commit_resent: 0, ack_from_heartbeat: 0 };
  const crashes: unknown[] = [];
  const ports = portsOf(votes, crashes);
  const writes: Array<{ message: OutboundMessage; voteBy: number | undefined; at: number }> = [];
  const answers: NodeAnswerMessage[] = [];
  let now = T0;
  const parent: NodeParent = {
    availability: () => {},
    runs: () => true,
    answer: (_node, _at, message) => void answers.push(message),
    send: (_node, message, voteBy) => {
      writes.push({ message, voteBy, at: now });
      follower.tell({ type: 'written', at: now, message, voteBy });
    },
  };
  const follower: NodeFollower = new NodeFollower(
    newNode({
      node_name: 'web1',
      config: settings,
      at: T0,
      saved: { node_name: 'web1', status: 'up', updated_at: T0, incarnation: 'inc-1' },
    }),
    'o',
    ports,
    parent,
  );
  const beat = (at: number, job: string | null = null, job_state: 'idle' | 'committed' = 'idle') => {
    now = at;
    const msg: NodeMsg = { type: 'heartbeat', at, incarnation: 'inc-1', job, job_state, sequence: at - T0 };
    follower.tell(msg);
  };
  return { follower, votes, writes, answers, crashes, beat };
}

t.test('a lost commit is written again through the parent, with its deadline, once per window', async (t) => {
  const { follower, votes, writes, crashes, beat } = fixture();
  follower.tell({ type: 'written', at: T0 + 10, message: COMMIT, voteBy: VOTE_BY });
  beat(T0 + 10 + WINDOW - 1);
  t.same(writes, [], 'within the window: nothing');
  beat(T0 + 10 + WINDOW);
  t.same(writes, [{ message: COMMIT, voteBy: VOTE_BY, at: T0 + 10 + WINDOW }], 'written again, its deadline with it');
  t.equal(writes[0]?.message, COMMIT, 'the message the transport wrote first');
  t.equal(votes.commit_resent, 1, 'counted');
  // Its write, reported from inside the follower's effect, started the window again.
  beat(T0 + 10 + 2 * WINDOW - 1);
  t.equal(writes.length, 1, 'not again within the next window');
  beat(T0 + 10 + 2 * WINDOW);
  t.equal(writes.length, 2, 'then again');
  t.equal(votes.commit_resent, 2);
  t.same(crashes, []);
});

t.test('a beat holding the job committed goes to the job as its ack, once', async (t) => {
  const { follower, votes, writes, answers, beat } = fixture();
  follower.tell({ type: 'written', at: T0 + 10, message: COMMIT, voteBy: VOTE_BY });
  beat(T0 + 10 + WINDOW, 'j1', 'committed');
  t.same(answers, [{ type: 'ack_commit', job_id: 'j1' }]);
  t.same(votes, { commit_resent: 0, ack_from_heartbeat: 1 });
  beat(T0 + 10 + 2 * WINDOW, 'j1', 'committed');
  t.equal(answers.length, 1, 'no longer awaited');
  t.same(writes, []);
});

t.test('the node answering, or its commit failing to reach it, ends the wait', async (t) => {
  const answered = fixture();
  answered.follower.tell({ type: 'written', at: T0 + 10, message: COMMIT, voteBy: VOTE_BY });
  answered.follower.tell({ type: 'answer', at: T0 + 20, message: { type: 'ack_commit', job_id: 'j1' }, sequence: 20 });
  answered.beat(T0 + 10 + WINDOW);
  t.same(answered.writes, [], 'answered');
  const lost = fixture();
  lost.follower.tell({ type: 'written', at: T0 + 10, message: COMMIT, voteBy: VOTE_BY });
  lost.follower.tell({ type: 'unroutable', at: T0 + 20, message: COMMIT });
  lost.beat(T0 + 10 + WINDOW);
  t.same(lost.writes, [], 'back with the transport, which writes it once the node is heard');
});

t.test(
  "a gateway's follower writes a lost commit again to the node's connection there, with its deadline",
  async (t) => {
    const votes: VotesRecovered = { commit_resent: 0, ack_from_heartbeat: 0 };
    let now = T0;
    const writes: Array<{ message: OutboundMessage; voteBy: number | undefined }> = [];
    // Its writes reach the transport, which reports each back to the node's follower.
    const gateways: GatewayNodes = new GatewayNodes(
      portsOf(votes, [], () => now),
      () => {},
      (org, node, message, voteBy) => {
        writes.push({ message, voteBy });
        gateways.nodeFollower(org, node)?.tell({ type: 'written', at: now, message, voteBy });
      },
    );
    await gateways.load('o');
    const follower = gateways.nodeFollower('o', 'web1');
    if (!follower) throw new Error('no follower');
    follower.tell({ type: 'written', at: T0 + 10, message: COMMIT, voteBy: VOTE_BY });
    now = T0 + 10 + WINDOW;
    follower.tell({ type: 'heartbeat', at: now, incarnation: 'inc-1', job: null, job_state: 'idle', sequence: 1 });
    t.same(writes, [{ message: COMMIT, voteBy: VOTE_BY }]);
    t.equal(votes.commit_resent, 1);
    now = T0 + 10 + 2 * WINDOW - 1;
    follower.tell({ type: 'heartbeat', at: now, incarnation: 'inc-1', job: null, job_state: 'idle', sequence: 2 });
    t.equal(writes.length, 1, 'its write started the window again');
    gateways.close();
  },
);
