// The push-jobs wire over real ZeroMQ sockets (spec 2.5, 3.3, 6; reference 2.6, 4): heartbeat loss and
// return, and messages that must be dropped, counted in GET /_status and change nothing.
import t, { type Test } from 'tap';
import { httpDate } from '../../src/lib/dates.js';
import { parseHttpDate } from '../../src/lib/dates.js';
import { receivesIntoOwnMemory } from '../../src/protocol/zmq-context.js';
import { startTestServer } from '../support/server.js';
import { pushStatus, startJob, waitForJob } from '../support/push-api.js';
import {
  ack,
  ignore,
  nack,
  late,
  poll,
  replay,
  startTestNode,
  tamper,
  type Script,
  type TestNode,
} from '../support/test-node.js';

// Eight intervals of silence before `down`: short enough for quick tests, long enough that a machine busy with
// other test files does not see nodes flap.
const FAST = { heartbeat_interval: 100, offline_threshold: 8, online_threshold: 2, voting_timeout: 2 };
const STATES = '/organizations/default/pushy/node_states';

interface NodeStateView {
  node_name: string;
  status: string;
  updated_at: string;
  availability?: string;
}

t.test('push-jobs transport', async (t) => {
  const s = await startTestServer(t, 'file', FAST);
  // Read into shared buffers, a burst of answers held a read buffer each until collected (zmq-context.test.ts).
  t.ok(receivesIntoOwnMemory(), "the server's channels read each message into memory of its own");
  const started: TestNode[] = [];
  const node = async (t: Test, name: string, script?: Script): Promise<TestNode> => {
    const n = await startTestNode(s, name, script);
    started.push(n);
    t.teardown(() => n.stop());
    return n;
  };
  const stateOf = async (name: string): Promise<NodeStateView> => {
    const res = await s.admin.request('GET', `${STATES}/${name}`);
    if (res.status !== 200) throw new Error(`node state of ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as NodeStateView;
  };
  const waitStatus = (name: string, status: string) =>
    poll(`${name} to be ${status}`, async () => {
      const state = await stateOf(name);
      return state.status === status ? state : undefined;
    });
  const connected = async (): Promise<number> => (await pushStatus(s)).connected_nodes;
  const droppedCounts = async (): Promise<Record<string, number>> => (await pushStatus(s)).dropped;
  /** Waits until GET /_status shows at least `delta` more drops of `reason` than `before`, then returns all deltas. */
  const dropsSince = async (before: Record<string, number>, reason: string, delta: number) => {
    const after = await poll(`${delta} more ${reason} drops`, async () => {
      const now = await droppedCounts();
      return (now[reason] ?? 0) - (before[reason] ?? 0) >= delta ? now : undefined;
    });
    return Object.fromEntries(
      Object.entries(after)
        .map(([k, v]) => [k, v - (before[k] ?? 0)])
        .filter(([, v]) => v !== 0),
    );
  };

  t.test(
    'a silent node goes down after offline_threshold intervals and comes back after online_threshold heartbeats',
    async (t) => {
      const n = await node(t, 'hb-1');
      const up = await stateOf('hb-1');
      t.match(up, { node_name: 'hb-1', status: 'up', availability: 'available' });
      const connectedUp = await connected();
      const downsBefore = (await pushStatus(s)).lag?.downs ?? NaN;
      t.ok(parseHttpDate(up.updated_at) !== undefined, `updated_at is an HTTP-date (${up.updated_at})`);

      n.pauseHeartbeats();
      const lastBeat = n.sent.filter((r) => r.body.type === 'heartbeat').at(-1)?.at ?? 0;
      // A job answer after the last heartbeat (as when a node answers its rehab abort late) does not keep a node
      // that went down counted as connected: the node and GET /_status go by the same heartbeats. The answer goes
      // once two more of the server's heartbeats came, an interval or more after the node's last one.
      const heard = n.received.length;
      await poll('two server heartbeats after the last of the node', () =>
        n.received.slice(heard).filter((m) => m.type === 'heartbeat').length >= 2 ? true : undefined,
      );
      n.send('command', { type: 'aborted', job_id: null });
      const down = await waitStatus('hb-1', 'down');
      t.ok(
        Date.now() - lastBeat > FAST.offline_threshold * FAST.heartbeat_interval,
        'not down before offline_threshold intervals of silence',
      );
      t.equal(down.availability, 'unavailable');
      t.equal(await connected(), connectedUp - 1, 'GET /_status counts one connected node fewer');
      t.equal((await pushStatus(s)).lag?.downs, downsBefore + 1, 'and one more node marked down');
      const listed = (await s.admin.request('GET', STATES)).body as NodeStateView[];
      t.match(
        listed.find((r) => r.node_name === 'hb-1'),
        { status: 'down' },
        'the node state list agrees',
      );

      // updated_at has one-second resolution: let the clock pass the second of going down.
      await poll('the next second', () => (httpDate(Date.now()) !== down.updated_at ? true : undefined), 2000);
      const received = n.received.length;
      const sent = n.sent.length;
      n.resumeHeartbeats();
      await n.waitFor('abort', { after: received, where: (m) => m.job_id === null });
      const beats = n.sent.slice(sent).filter((r) => r.body.type === 'heartbeat').length;
      t.ok(
        beats >= FAST.online_threshold,
        `the server waited for ${FAST.online_threshold} heartbeats (${beats} sent) before taking the node back`,
      );
      await n.ready();
      const back = await stateOf('hb-1');
      t.match(back, { status: 'up', availability: 'available' });
      t.ok(
        parseHttpDate(back.updated_at)! > parseHttpDate(down.updated_at)!,
        `updated_at moved on (${down.updated_at} -> ${back.updated_at})`,
      );
      t.equal(await connected(), connectedUp, 'and counts it again');
    },
  );

  t.test('replayed heartbeats keep no node up, on their own channel or on the other', async (t) => {
    const n = await node(t, 'rp-hb');
    const recorded = () => n.sent.filter((r) => r.body.type === 'heartbeat');
    await poll('17 heartbeats to replay', () => (recorded().length >= 17 ? true : undefined));
    const before = await droppedCounts();
    n.pauseHeartbeats();
    // Each interval: the newest heartbeat again on its channel, and the next of the fifteen newest on the command
    // channel, whose own sequence they all exceed.
    const beats = recorded().slice(-15);
    let next = 0;
    const replaying = setInterval(() => {
      n.replay(beats.at(-1));
      const beat = beats[next];
      if (beat === undefined) return;
      next += 1;
      n.replay(beat, 'command');
    }, FAST.heartbeat_interval);
    t.teardown(() => clearInterval(replaying));
    await waitStatus('rp-hb', 'down');
    clearInterval(replaying);
    t.ok(next < beats.length, `the node went down while replays were still coming (${next} of ${beats.length})`);
    const deltas = await dropsSince(before, 'replay', 1);
    t.same(
      Object.keys(deltas).sort(),
      ['bad_body', 'replay'],
      'replays are dropped, and so are heartbeats on the command channel',
    );
  });

  t.test('a replayed answer is dropped: the node stays ready and the job times out', async (t) => {
    const n = await node(t, 'rp-ans', { run: replay() });
    const before = await droppedCounts();
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['rp-ans'], run_timeout: 1 });
    await n.waitFor('run', { where: (m) => m.job_id === id });
    const deltas = await dropsSince(before, 'replay', 1);
    t.same(deltas, { replay: 1 }, 'the replayed ack_commit is counted');
    const job = await waitForJob(s.admin, id, 'timed_out');
    t.same(job.nodes, { timed_out: ['rp-ans'] }, 'the replay did not count as a second answer');
  });

  t.test(
    'forged, unsigned, oversize, malformed and invalid answers are dropped, counted, and change nothing',
    async (t) => {
      const kinds = [
        ['forge', 'bad_signature'],
        ['unsigned', 'bad_header'],
        ['oversize', 'oversize'],
        ['malformed', 'bad_json'],
        ['bad_body', 'bad_body'],
        ['skew', 'skew'],
      ] as const;
      const names = kinds.map(([how]) => `tm-${how.replace('_', '-')}`);
      await Promise.all(kinds.map(([how], i) => node(t, names[i]!, { commit: tamper(how, ack()) })));
      const before = await droppedCounts();
      const id = await startJob(s.admin, { command: 'chef-client', nodes: names, voting_timeout: 1 });
      const job = await waitForJob(s.admin, id, 'quorum_failed');
      t.same(job.nodes, { unavailable: [...names].sort() }, 'no tampered ack made a node ready');
      // A node that shows no job held is asked again, and each answered every commit the same way: one drop each.
      const commitsTo = (how: string) =>
        started.find((n) => n.name === `tm-${how.replace('_', '-')}`)?.received.filter((m) => m.type === 'commit')
          .length ?? 0;
      const expectedNow = () => Object.fromEntries(kinds.map(([how, reason]) => [reason, commitsTo(how)]));
      let expected = expectedNow();
      let deltas: Record<string, number> = {};
      await poll('one drop per commit answered', async () => {
        const now = await droppedCounts();
        expected = expectedNow();
        deltas = Object.fromEntries(Object.keys(expected).map((k) => [k, (now[k] ?? 0) - (before[k] ?? 0)]));
        return kinds.every(([, reason]) => deltas[reason] === expected[reason]) ? true : undefined;
      }).catch(() => undefined);
      t.ok(
        Object.values(expected).every((n) => n >= 1),
        'every node was asked',
      );
      t.same(deltas, expected, 'each drop is counted under its reason, one per commit answered');
    },
  );

  t.test('a second client process for a running node is refused and told so; the first keeps the node', async (t) => {
    const first = await node(t, 'dup-1');
    const before = await droppedCounts();
    const second = await startTestNode(s, 'dup-1', {}, { existing: true, waitReady: false });
    t.teardown(() => second.stop());
    const told = await second.waitFor('node_in_use');
    t.ok(told.retry_after_ms > 0, `the refused process is told when it may try again (${told.retry_after_ms} ms)`);
    const again = await second.waitFor('node_in_use', { where: (m) => m.sequence > told.sequence });
    const gap = second.receivedAt[second.received.indexOf(again)]! - second.receivedAt[second.received.indexOf(told)]!;
    t.ok(
      gap >= FAST.heartbeat_interval * 0.9,
      `while it keeps trying it is told again, at most once an interval (${gap} ms later)`,
    );
    await dropsSince(before, 'incarnation_in_use', 2);
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['dup-1'] });
    t.same((await waitForJob(s.admin, id, 'complete')).nodes, { succeeded: ['dup-1'] }, 'a job runs on the node');
    t.ok(
      first.received.some((m) => m.type === 'commit' && m.job_id === id),
      'on the first process',
    );
    t.notOk(
      second.received.some((m) => m.type === 'commit'),
      'not on the refused one',
    );
    t.notOk(
      first.received.some((m) => m.type === 'abort' && m.job_id === null && m.sequence > told.sequence),
      'the first process was never reset',
    );

    first.crash();
    await second.ready();
    const next = await startJob(s.admin, { command: 'chef-client', nodes: ['dup-1'] });
    t.same((await waitForJob(s.admin, next, 'complete')).nodes, { succeeded: ['dup-1'] }, 'after the first stops');
    t.ok(
      second.received.some((m) => m.type === 'commit' && m.job_id === next),
      'the second process takes the node',
    );
  });

  t.test('one forged message under a new incarnation locks no node out', async (t) => {
    const real = await node(t, 'forge-1');
    const before = await droppedCounts();
    // Anyone holding the node's session key can sign a message of an incarnation of its own choosing.
    const forger = await startTestNode(s, 'forge-1', {}, { existing: true, waitReady: false });
    forger.pauseHeartbeats();
    t.teardown(() => forger.stop());
    await dropsSince(before, 'incarnation_in_use', 1);
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['forge-1'] });
    t.same((await waitForJob(s.admin, id, 'complete')).nodes, { succeeded: ['forge-1'] }, 'the real client runs jobs');
    t.match(await stateOf('forge-1'), { status: 'up', availability: 'available' });
    t.same(real.problems, [], 'and nothing it receives is dropped');
  });

  t.test('frames no client sends are dropped and the node stays available', async (t) => {
    const n = await node(t, 'raw-1');
    const [header, body] = n.sent.filter((r) => r.body.type === 'heartbeat').at(-1)!.frames as [Buffer, Buffer];
    const before = await droppedCounts();
    n.sendRaw('command', [Buffer.from('one frame')]);
    n.sendRaw('heartbeat', [header, body, Buffer.from('extra')]);
    n.sendRaw('command', [Buffer.alloc(4096, 'H'), body]);
    n.sendRaw('command', [Buffer.from('Version:1.0;SigningMethod:rsa2048_sha1;Signature:x'), body]);
    n.sendRaw('heartbeat', [header, Buffer.from('[1, 2, 3]')]);
    const deltas = await dropsSince(before, 'frame_count', 2);
    const all = await dropsSince(before, 'bad_json', 1);
    t.same(all, { frame_count: 2, oversize: 1, bad_header: 1, bad_json: 1 }, 'each drop is counted under its reason');
    t.ok(deltas.frame_count === 2, 'one frame and three frames are both frame_count');
    t.match(await stateOf('raw-1'), { status: 'up', availability: 'available' }, 'the node is still up and available');
  });

  t.test('a node whose heartbeat names a job the server does not run is told to abort', async (t) => {
    const n = await node(t, 'holder');
    await n.ready();
    const before = n.received.filter((m) => m.type === 'abort').length;
    n.job = { state: 'running', id: 'f'.repeat(32), capture: false };
    await poll('an abort for the unknown job', async () =>
      n.received.filter((m) => m.type === 'abort').length > before ? true : undefined,
    );
    t.ok(
      n.received.some((m) => m.type === 'abort' && m.job_id === null),
      'the abort names no job: drop whatever you run',
    );
  });

  t.test('a node that never fetched a config is refused in its handshake and creates no node state', async (t) => {
    const known = await s.admin.request('POST', '/organizations/default/nodes', { name: 'ghost-known' });
    t.equal(known.status, 201);
    const ghostBefore = await stateOf('ghost-known');
    const nodesBefore = await connected();
    const before = await droppedCounts();
    const refused = async () => (await pushStatus(s)).connections?.refused.curve_key_unknown ?? 0;
    const refusedBefore = await refused();
    const ghosts = [
      await startTestNode(s, 'ghost-known', {}, { register: false }),
      await startTestNode(s, 'ghost-unknown', {}, { register: false }),
    ];
    t.teardown(() => {
      for (const g of ghosts) g.stop();
    });
    // Their Curve keys were never named in a config request: ZAP refuses both channels of each, again and again.
    await poll('their Curve keys to be refused', async () =>
      (await refused()) >= refusedBefore + 4 ? true : undefined,
    );
    t.same(await droppedCounts(), before, 'none of their heartbeats got as far as the message checks');
    t.same(await stateOf('ghost-known'), ghostBefore, 'the node object keeps its never-heard state');
    t.equal(
      (await s.admin.request('GET', `${STATES}/ghost-unknown`)).status,
      404,
      'no node state appears for a name with no node',
    );
    const listed = (await s.admin.request('GET', STATES)).body as NodeStateView[];
    t.notOk(
      listed.some((r) => r.node_name === 'ghost-unknown'),
      'the node state list does not show it',
    );
    t.ok((await connected()) <= nodesBefore, 'no node counts as connected');
    t.same(
      ghosts.flatMap((g) => g.received),
      [],
      'the server sent them nothing',
    );
  });

  t.test('every message the nodes received was signed, well formed and on its own channel', async (t) => {
    t.same(
      started.flatMap((n) => n.problems.map((p) => `${n.name}: ${p}`)),
      [],
    );
  });
  /**
   * The node is heard on the heartbeat channel under a new routing id while its command channel comes up
   * `commandAfterMs` later; it beats all along, so it stays up, and the job's commit must reach it.
   */
  const commitReachesLateCommandChannel = async (t: Test, name: string, commandAfterMs: number) => {
    const n = await node(t, name);
    n.reconnect(commandAfterMs);
    await n.waitFor('heartbeat', { after: n.received.length, timeoutMs: 500 });
    const id = await startJob(s.admin, { command: 'chef-client', nodes: [name] });
    const job = await waitForJob(
      s.admin,
      id,
      (j) => j.status !== 'new' && j.status !== 'voting' && j.status !== 'running',
    );
    t.equal(job.status, 'complete', 'the commit reached the node once its command channel was up');
    t.equal(n.received.filter((m) => m.type === 'commit').length, 1, 'one commit');
    t.same(n.problems, []);
  };
  t.test('a commit for a node heard before its command connection is up waits for that connection', (t) =>
    commitReachesLateCommandChannel(t, 'late-command', 600),
  );
  // Past the offline window (800 ms), within the voting timeout (2 s).
  t.test('a commit waits past the offline window for a node that keeps heartbeating', (t) =>
    commitReachesLateCommandChannel(t, 'later-command', 1300),
  );
  const recovered = async () => {
    const counts = (await pushStatus(s)).votes_recovered;
    if (!counts) throw new Error('GET /_status shows no votes_recovered');
    return counts;
  };
  const window = FAST.offline_threshold * FAST.heartbeat_interval;
  t.test('a commit the node never got is sent again an offline window later', async (t) => {
    let asked = 0;
    const n = await node(t, 'lost-commit', { commit: () => (++asked === 1 ? ignore() : ack()) });
    const before = await recovered();
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['lost-commit'] });
    const job = await waitForJob(s.admin, id, (j) => j.status !== 'new' && j.status !== 'voting');
    t.not(job.status, 'quorum_failed', 'the node voted within voting_timeout');
    const commits = n.received.flatMap((m, i) => (m.type === 'commit' ? [n.receivedAt[i]!] : []));
    t.equal(commits.length, 2, 'the commit came again once');
    const gap = commits[1]! - commits[0]!;
    t.ok(gap >= window - 20, `an offline window after the first (${gap} ms)`);
    const after = await recovered();
    t.equal(after.commit_resent - before.commit_resent, 1, 'GET /_status counts it');
    t.equal(after.ack_from_heartbeat, before.ack_from_heartbeat);
    t.same(n.problems, []);
  });
  t.test('a lost commit is sent again while a later job has the node', async (t) => {
    let lost: string | undefined;
    const n = await node(t, 'lost-first', {
      commit: (m, held) => {
        if (lost === undefined) {
          lost = m.job_id; // the first job's commit never arrives
          return ignore();
        }
        return held.job.id !== null && held.job.id !== m.job_id ? nack('busy') : ack();
      },
    });
    const before = await recovered();
    const first = await startJob(s.admin, { command: 'chef-client', nodes: ['lost-first'] });
    await n.waitFor('commit', { after: 0, timeoutMs: 2000 });
    const second = await startJob(s.admin, { command: 'chef-client', nodes: ['lost-first'] });
    const done = (j: { status: string }) => j.status !== 'new' && j.status !== 'voting' && j.status !== 'running';
    t.equal((await waitForJob(s.admin, second, done)).status, 'complete', 'the later job ran');
    const job = await waitForJob(s.admin, first, done);
    t.equal(job.status, 'complete', 'the first job got its vote within voting_timeout');
    t.equal(n.received.filter((m) => m.type === 'commit' && m.job_id === first).length, 2, 'its commit came again');
    const after = await recovered();
    t.equal(after.commit_resent - before.commit_resent, 1, 'GET /_status counts it');
    t.same(n.problems, []);
  });
  t.test('a node whose heartbeat says it holds the job committed, its ack lost, counts as ready', async (t) => {
    const n = await node(t, 'lost-ack', {
      commit: (m, held) => {
        held.job = { state: 'committed', id: m.job_id, capture: false }; // committed, but the ack never leaves
        return ignore();
      },
    });
    const before = await recovered();
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['lost-ack'] });
    const job = await waitForJob(s.admin, id, (j) => j.status !== 'new' && j.status !== 'voting');
    t.not(job.status, 'quorum_failed', 'its heartbeat counted as the ack, and the job ran');
    t.equal(n.received.filter((m) => m.type === 'commit').length, 1, 'not asked again');
    const after = await recovered();
    t.equal(after.ack_from_heartbeat - before.ack_from_heartbeat, 1, 'GET /_status counts it');
    t.equal(after.commit_resent, before.commit_resent);
  });
  t.test('a node sent to rehab is not asked again for the vote its job counted lost', async (t) => {
    const n = await node(t, 'rehab-voter', {
      commit: (_m, held) => {
        held.job = { state: 'running', id: 'e'.repeat(32), capture: false }; // a job the server does not run
        return ignore();
      },
    });
    await node(t, 'slow-voter', { commit: late(1500, ack()) }); // holds the vote open meanwhile
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['rehab-voter', 'slow-voter'] });
    const job = await waitForJob(s.admin, id, (j) => j.status !== 'new' && j.status !== 'voting');
    t.same(job.nodes.unavailable, ['rehab-voter'], 'counted gone when it was sent to rehab');
    t.ok(
      n.received.some((m) => m.type === 'abort' && m.job_id === null),
      'the rehab abort came',
    );
    t.equal(n.received.filter((m) => m.type === 'commit').length, 1, 'the commit came once');
  });
  t.test('a node that never answers is asked again until voting ends, then no more', async (t) => {
    const n = await node(t, 'mute-commit', { commit: ignore() });
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['mute-commit'] });
    const job = await waitForJob(s.admin, id, 'quorum_failed');
    t.same(job.nodes, { unavailable: ['mute-commit'] });
    const asked = n.received.filter((m) => m.type === 'commit').length;
    const most = Math.floor((FAST.voting_timeout * 1000) / window) + 1;
    t.ok(asked >= 2 && asked <= most, `asked ${asked} times, once an offline window at most`);
    // Two offline windows of the server's own heartbeats: had it gone on asking, a commit would have come among them.
    const heard = n.received.length;
    await poll(
      'two offline windows of server heartbeats',
      () =>
        n.received.slice(heard).filter((m) => m.type === 'heartbeat').length >= 2 * FAST.offline_threshold
          ? true
          : undefined,
      10_000,
    );
    t.equal(n.received.filter((m) => m.type === 'commit').length, asked, 'no commit once the vote is over');
  });
  t.test('a commit waiting for a node that goes down is let go, and its rehab abort waits as one copy', async (t) => {
    const n = await node(t, 'gone-command');
    n.reconnect(3000);
    await n.waitFor('heartbeat', { after: n.received.length, timeoutMs: 500 });
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['gone-command'] });
    n.pauseHeartbeats();
    const job = await waitForJob(s.admin, id, 'quorum_failed');
    t.same(job.nodes, { unavailable: ['gone-command'] }, 'the job counted the silent node gone');
    await waitStatus('gone-command', 'down');
    const seen = n.received.length;
    n.resumeHeartbeats();
    // Back after rehab: the server's abort came over the command channel, so what waited for it would have too.
    await n.waitFor('abort', { after: seen, timeoutMs: 5000 });
    await n.ready();
    t.equal(n.received.filter((m) => m.type === 'commit').length, 0, 'no commit for the job it was counted gone from');
    // Its rehab abort was resent once an interval while the command channel was down: it waited as one copy.
    const aborts = n.received.slice(seen).filter((m) => m.type === 'abort').length;
    t.ok(aborts <= 2, `the abort came once, not piled up (${aborts} received)`);
    t.same(n.problems, []);
  });
});

t.test("the server's heartbeats are spread over the interval, each node hearing one per interval", async (t) => {
  // 600 ms: six slots of 100 ms. Twelve nodes heard all at once would share one slot.
  const interval = 600;
  const s = await startTestServer(t, 'file', { ...FAST, heartbeat_interval: interval });
  const nodes = await Promise.all(Array.from({ length: 12 }, (_, i) => startTestNode(s, `spread-${i}`)));
  t.teardown(() => Promise.all(nodes.map((n) => n.stop())));
  // Every node is heard before the rounds that are measured begin; they are measured once each node has heard the
  // server after them.
  const from = Date.now() + 2 * interval;
  const to = from + 3 * interval;
  const heartbeatTimes = (n: TestNode) => n.receivedAt.filter((_at, i) => n.received[i]?.type === 'heartbeat');
  await poll(
    'every node to hear the server after the three intervals measured',
    () => (nodes.every((n) => heartbeatTimes(n).some((at) => at >= to)) ? true : undefined),
    20_000,
  );
  const beats = nodes.map((n) => heartbeatTimes(n).filter((at) => at >= from && at < to));
  const gaps = beats.flatMap((times) => times.slice(1).map((at, i) => at - (times[i] as number)));
  t.ok(
    beats.every((times) => times.length >= 2 && times.length <= 4),
    `each node heard the server about once per interval over three intervals (${beats.map((b) => b.length).join(', ')})`,
  );
  t.ok(
    gaps.every((g) => g > interval / 2 && g < interval * 1.5),
    `a node's beats are an interval apart (gaps ${Math.min(...gaps)} to ${Math.max(...gaps)} ms)`,
  );
  const firstRound = beats.map((times) => (times[0] as number) - from);
  const slotsUsed = new Set(firstRound.map((at) => Math.floor((at % interval) / 100)));
  t.ok(slotsUsed.size >= 4, `one round's beats fall in ${slotsUsed.size} of the 6 slots, not all at once`);
});
