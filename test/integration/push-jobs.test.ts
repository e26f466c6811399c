// Push jobs end to end over real ZeroMQ sockets (spec 2.4, 3.1-3.3; reference 5): scripted nodes vote, run,
// fail, die and time out, and the job and its per-node states read back through the REST API.
import { NODE_STATES_MAP, nodeStatesCollection } from '../../src/store/collections.js';
import t, { type Test } from 'tap';
import { parseHttpDate } from '../../src/lib/dates.js';
import { freePorts } from '../support/server-process.js';
import { STORE_KINDS, startTestServer, type TestServer } from '../support/server.js';
import { getJob, startJob, waitForEnd, waitForJob } from '../support/push-api.js';
import {
  ack,
  fail,
  ignore,
  late,
  nack,
  poll,
  startTestNode,
  succeed,
  type Script,
  type TestNode,
  type TestNodeOptions,
} from '../support/test-node.js';

// Eight intervals of silence before `down`: short enough for quick tests, long enough that a machine busy with
// other test files does not see nodes flap.
const FAST = { heartbeat_interval: 100, offline_threshold: 8, online_threshold: 2, voting_timeout: 2 };
const JOBS = '/organizations/default/pushy/jobs';

function isHttpDate(v: unknown): boolean {
  return typeof v === 'string' && parseHttpDate(v) !== undefined;
}

t.test('push jobs over ZeroMQ', async (t) => {
  const s = await startTestServer(t, 'file', FAST);
  const started: TestNode[] = [];
  const node = async (t: Test, name: string, script?: Script, opts?: TestNodeOptions): Promise<TestNode> => {
    const n = await startTestNode(s, name, script, opts);
    started.push(n);
    t.teardown(() => n.stop());
    return n;
  };

  t.test('every node succeeds: the job completes and reads back as spec 2.4 says', async (t) => {
    const nodes = await Promise.all(['ok-1', 'ok-2', 'ok-3'].map((n) => node(t, n)));
    const res = await s.admin.request('POST', JOBS, {
      command: 'chef-client',
      nodes: ['ok-1', 'ok-2', 'ok-3'],
      run_timeout: 300,
    });
    t.equal(res.status, 201, 'POST jobs answers 201');
    const { id, uri } = res.body as { id: string; uri: string };
    t.match(id, /^[0-9a-f]{32}$/, 'the id is 32 hex characters');
    t.equal(uri, `${s.url}${JOBS}/${id}`, 'uri names the new job');
    for (const n of nodes) {
      const commit = await n.waitFor('commit', { where: (m) => m.job_id === id });
      t.equal(commit.command, 'chef-client', `${n.name} was asked to commit to the command`);
      await n.waitFor('run', { where: (m) => m.job_id === id });
    }
    const job = await waitForJob(s.admin, id, 'complete');
    t.same(job.nodes, { succeeded: ['ok-1', 'ok-2', 'ok-3'] }, 'every node succeeded');
    t.equal(job.id, id);
    t.equal(job.command, 'chef-client');
    t.equal(job.run_timeout, 300);
    t.ok(isHttpDate(job.created_at), `created_at is an HTTP-date (${job.created_at})`);
    t.ok(isHttpDate(job.updated_at), `updated_at is an HTTP-date (${job.updated_at})`);
    t.ok(parseHttpDate(job.updated_at)! >= parseHttpDate(job.created_at)!, 'updated_at is not before created_at');
    const perNode = (job as { node_updated_at?: Record<string, string> }).node_updated_at ?? {};
    t.same(Object.keys(perNode).sort(), ['ok-1', 'ok-2', 'ok-3'], 'each node has the time it reached its status');
    t.ok(
      Object.values(perNode).every((d) => isHttpDate(d) && parseHttpDate(d)! >= parseHttpDate(job.created_at)!),
      'node times are HTTP-dates after the job began',
    );

    const second = await startJob(s.admin, { command: 'uptime', nodes: ['ok-1'] });
    await waitForJob(s.admin, second, 'complete');
    const list = await s.admin.request('GET', JOBS);
    t.equal(list.status, 200);
    const rows = list.body as Array<Record<string, unknown>>;
    t.same(
      rows.slice(0, 2).map((r) => r.id),
      [second, id],
      'the job list shows the newest job first',
    );
    t.match(
      rows[0],
      { id: second, command: 'uptime', status: 'complete', run_timeout: 3600 },
      'a row carries the job fields',
    );
    t.ok(
      rows.every((r) => isHttpDate(r.created_at) && isHttpDate(r.updated_at)),
      'list dates are HTTP-dates',
    );
    t.ok(
      rows.every((r) => !('nodes' in r)),
      'the list leaves out per-node states (reference 6.3)',
    );
  });

  t.test('one node refuses: the job runs on the others when the quorum is met', async (t) => {
    const [q1, q2, q3] = await Promise.all([
      node(t, 'q-1'),
      node(t, 'q-2'),
      node(t, 'q-3', { commit: nack('not_whitelisted') }),
    ]);
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['q-1', 'q-2', 'q-3'], quorum: 2 });
    const job = await waitForJob(s.admin, id, 'complete');
    t.same(job.nodes, { succeeded: ['q-1', 'q-2'], nacked: ['q-3'] });
    t.ok(
      q1!.received.some((m) => m.type === 'run' && m.job_id === id),
      'a ready node was told to run',
    );
    t.ok(
      q2!.received.some((m) => m.type === 'run' && m.job_id === id),
      'the other ready node was told to run',
    );
    t.notOk(
      q3!.received.some((m) => m.type === 'run'),
      'the refusing node was not told to run',
    );
  });

  t.test('one node refuses: quorum_failed, and the ready nodes were_ready and are released', async (t) => {
    const nodes = await Promise.all([node(t, 'qf-1'), node(t, 'qf-2'), node(t, 'qf-3', { commit: nack('busy') })]);
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['qf-1', 'qf-2', 'qf-3'] });
    const job = await waitForJob(s.admin, id, 'quorum_failed');
    t.same(job.nodes, { was_ready: ['qf-1', 'qf-2'], nacked: ['qf-3'] });
    for (const n of nodes.slice(0, 2)) {
      await n.waitFor('abort', { where: (m) => m.job_id === id });
      t.equal(n.job.id, null, `${n.name} let go of the job it had committed to`);
    }
    t.notOk(
      nodes.some((n) => n.received.some((m) => m.type === 'run')),
      'no node was told to run',
    );
  });

  t.test('quorum as a count and as a percentage of the nodes', async (t) => {
    const names = ['pc-1', 'pc-2', 'pc-3'];
    await Promise.all([node(t, 'pc-1'), node(t, 'pc-2'), node(t, 'pc-3', { commit: nack('busy') })]);
    const cases: Array<[number | string, string]> = [
      [2, 'complete'],
      [3, 'quorum_failed'],
      ['66%', 'complete'],
      ['67%', 'quorum_failed'],
      ['100%', 'quorum_failed'],
    ];
    for (const [quorum, status] of cases) {
      const id = await startJob(s.admin, { command: 'chef-client', nodes: names, quorum });
      const job = await waitForEnd(s.admin, id);
      t.equal(job.status, status, `quorum ${JSON.stringify(quorum)} of 3 with 2 ready: ${status}`);
    }
  });

  t.test('a node down when the job starts is unavailable at once and never asked', async (t) => {
    const live = await node(t, 'dn-live');
    const gone = await node(t, 'dn-gone');
    gone.stop();
    await poll('dn-gone to be down', async () => {
      const res = await s.admin.request('GET', '/organizations/default/pushy/node_states/dn-gone');
      return (res.body as { status?: string }).status === 'down' ? true : undefined;
    });
    const commits = gone.received.filter((m) => m.type === 'commit').length;
    const id = await startJob(s.admin, {
      command: 'chef-client',
      nodes: ['dn-live', 'dn-gone', 'dn-never-heard'],
      quorum: 1,
    });
    const first = await getJob(s.admin, id);
    t.same(
      first.nodes.unavailable,
      ['dn-gone', 'dn-never-heard'],
      'the silent nodes are unavailable in the first view of the job',
    );
    const job = await waitForJob(s.admin, id, 'complete');
    t.same(job.nodes, { succeeded: ['dn-live'], unavailable: ['dn-gone', 'dn-never-heard'] });
    t.ok(
      live.received.some((m) => m.type === 'commit' && m.job_id === id),
      'the live node was asked',
    );
    t.equal(gone.received.filter((m) => m.type === 'commit').length, commits, 'the down node was not asked');
  });

  t.test('a node that dies while running is crashed, and the job completes without it', async (t) => {
    const dying = await node(t, 'die-1', { run: ack() });
    await node(t, 'die-2');
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['die-1', 'die-2'] });
    await dying.waitForSent('ack_run', { where: (m) => m.job_id === id });
    await waitForJob(s.admin, id, 'running');
    dying.crash();
    const job = await waitForJob(s.admin, id, 'complete');
    t.same(job.nodes, { crashed: ['die-1'], succeeded: ['die-2'] });
  });

  t.test('run timeout: the job is timed_out and the running node is told to abort', async (t) => {
    const slow = await node(t, 'slow-1', { run: ack() });
    const id = await startJob(s.admin, { command: 'sleep', nodes: ['slow-1'], run_timeout: 1 });
    await slow.waitForSent('ack_run', { where: (m) => m.job_id === id });
    const job = await waitForJob(s.admin, id, 'timed_out');
    t.same(job.nodes, { timed_out: ['slow-1'] });
    await slow.waitFor('abort', { where: (m) => m.job_id === id });
    t.equal(slow.job.id, null, 'the node dropped the job');
  });

  t.test('voting timeout: a node that never answers is unavailable, the others run', async (t) => {
    const mute = await node(t, 'mute-1', { commit: ignore() });
    await node(t, 'mute-2');
    const id = await startJob(s.admin, {
      command: 'chef-client',
      nodes: ['mute-1', 'mute-2'],
      quorum: 1,
      voting_timeout: 1,
    });
    await mute.waitFor('commit', { where: (m) => m.job_id === id });
    const job = await waitForJob(s.admin, id, 'complete');
    t.same(job.nodes, { unavailable: ['mute-1'], succeeded: ['mute-2'] });
    await mute.waitFor('abort', { where: (m) => m.job_id === id });
  });

  t.test('an answer after the voting timeout does not count, and the node is told to let go', async (t) => {
    const slow = await node(t, 'late-1', { commit: late(1500, ack()) });
    await node(t, 'late-2');
    const id = await startJob(s.admin, {
      command: 'chef-client',
      nodes: ['late-1', 'late-2'],
      quorum: 1,
      voting_timeout: 1,
    });
    const job = await waitForJob(s.admin, id, 'complete');
    t.same(job.nodes, { unavailable: ['late-1'], succeeded: ['late-2'] });
    await slow.waitForSent('ack_commit', { where: (m) => m.job_id === id });
    const after = slow.received.length;
    await slow.waitFor('abort', { after, where: (m) => m.job_id === id });
    t.equal(slow.job.id, null, 'the late node was released from the job it committed to');
    t.same((await getJob(s.admin, id)).nodes, job.nodes, 'the finished job did not change');
  });

  t.test(
    'a client that restarts mid-job is crashed in it, and its new process is taken back after rehab',
    async (t) => {
      const first = await node(t, 'rb-1', { run: ack() });
      const id = await startJob(s.admin, { command: 'chef-client', nodes: ['rb-1'] });
      await first.waitForSent('ack_run', { where: (m) => m.job_id === id });
      first.crash();
      const second = await node(t, 'rb-1', {}, { existing: true });
      t.ok(
        second.received.some((m) => m.type === 'abort' && m.job_id === null),
        'the new process got the rehab abort',
      );
      t.same(
        (await waitForJob(s.admin, id, 'complete')).nodes,
        { crashed: ['rb-1'] },
        "the old process's job is crashed",
      );
      const next = await startJob(s.admin, { command: 'chef-client', nodes: ['rb-1'] });
      t.same(
        (await waitForJob(s.admin, next, 'complete')).nodes,
        { succeeded: ['rb-1'] },
        'the new process runs the next job',
      );
    },
  );

  t.test('a user aborts a running job; aborting it again is 409', async (t) => {
    const busy = await node(t, 'ab-1', { run: ack() });
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['ab-1'] });
    await busy.waitForSent('ack_run', { where: (m) => m.job_id === id });
    await waitForJob(s.admin, id, 'running');
    const res = await s.admin.request('POST', `${JOBS}/${id}/abort`);
    t.equal(res.status, 200, `abort answers 200 (${JSON.stringify(res.body)})`);
    t.match(res.body, { id, status: 'aborted', nodes: { aborted: ['ab-1'] } }, 'the answer shows the aborted job');
    await busy.waitFor('abort', { where: (m) => m.job_id === id });
    const job = await getJob(s.admin, id);
    t.equal(job.status, 'aborted');
    t.same(job.nodes, { aborted: ['ab-1'] });
    const again = await s.admin.request('POST', `${JOBS}/${id}/abort`);
    t.equal(again.status, 409, 'a finished job cannot be aborted');
    t.match(again.body, { error: [/aborted/] });
  });

  t.test('a busy node refuses a second job', async (t) => {
    const busy = await node(t, 'busy-1', { run: ack() });
    const first = await startJob(s.admin, { command: 'chef-client', nodes: ['busy-1'] });
    await busy.waitForSent('ack_run', { where: (m) => m.job_id === first });
    const second = await startJob(s.admin, { command: 'uptime', nodes: ['busy-1'] });
    const job = await waitForJob(s.admin, second, 'quorum_failed');
    t.same(job.nodes, { nacked: ['busy-1'] });
    t.equal((await getJob(s.admin, first)).status, 'running', 'the first job runs on');
    busy.finish();
    t.same((await waitForJob(s.admin, first, 'complete')).nodes, { succeeded: ['busy-1'] });
  });

  t.test('output capture: GET output returns what each node printed', async (t) => {
    await node(t, 'out-1', { run: succeed({ stdout: 'hello\nworld\n', stderr: 'a warning' }) });
    await node(t, 'out-2', { run: fail(3, { stdout: 'oops' }) });
    await node(t, 'out-3', { run: succeed({ stdout: 'not asked for' }) });
    const id = await startJob(s.admin, {
      command: 'chef-client',
      nodes: ['out-1', 'out-2'],
      quorum: 1,
      capture_output: true,
    });
    const job = await waitForJob(s.admin, id, 'complete');
    t.same(job.nodes, { succeeded: ['out-1'], failed: ['out-2'] }, 'a non-zero exit status is failed');
    const out = (node: string, channel: string) => s.admin.request('GET', `${JOBS}/${id}/output/${node}/${channel}`);
    const stdout = await out('out-1', 'stdout');
    t.equal(stdout.status, 200);
    t.equal(stdout.body, 'hello\nworld\n', 'stdout as printed');
    t.equal(stdout.headers.get('content-type'), 'application/octet-stream');
    t.equal((await out('out-1', 'stderr')).body, 'a warning', 'stderr as printed');
    t.equal((await out('out-2', 'stdout')).body, 'oops', 'a failed node keeps its output');
    t.equal((await out('out-9', 'stdout')).status, 404, 'a node not in the job has no output');
    t.equal((await out('out-1', 'stdin')).status, 404, 'only stdout and stderr exist');

    const plain = await startJob(s.admin, { command: 'chef-client', nodes: ['out-3'] });
    await waitForJob(s.admin, plain, 'complete');
    t.equal(
      (await s.admin.request('GET', `${JOBS}/${plain}/output/out-3/stdout`)).status,
      404,
      'no capture asked, none kept',
    );
  });

  t.test('every message the nodes received was signed, well formed and on its own channel', async (t) => {
    t.same(
      started.flatMap((n) => n.problems.map((p) => `${n.name}: ${p}`)),
      [],
    );
  });
});

for (const kind of STORE_KINDS)
  t.test(`${kind} store: a job in flight survives a server restart when its node keeps heartbeating`, async (t) => {
    const ports = await freePorts(2);
    let s: TestServer = await startTestServer(t, kind, {
      ...FAST,
      server_heartbeat_port: ports[0],
      command_port: ports[1],
    });
    const n = await startTestNode(s, 'rs-1', { run: ack() });
    t.teardown(() => n.stop());
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['rs-1'], run_timeout: 60 });
    // The server must have recorded the node running: an ack_run lost in the restart would leave it `ready`,
    // and a result from a node that never said it started counts as a crash (reference 5.5).
    await waitForJob(s.admin, id, (job) => job.nodes.running?.includes('rs-1') === true);
    // Node states are written behind once per heartbeat interval; the restart must find rs-1 up.
    await poll('rs-1 saved up', async () => {
      const states = await s.running.system.store.getFields(nodeStatesCollection('default'), NODE_STATES_MAP);
      const saved = states.get('rs-1');
      return (saved as { status?: string } | undefined)?.status === 'up' ? true : undefined;
    });

    s = await s.restart();
    const beats = n.received.filter((m) => m.type === 'heartbeat').length;
    const restarted = await n.waitFor('heartbeat', {
      after: beats,
      where: (m) => m.incarnation_id !== n.received[0]?.incarnation_id,
    });
    t.ok(restarted, 'the node hears the restarted server without fetching a new config');
    t.equal((await getJob(s.admin, id)).status, 'running', 'the job is still running after the restart');
    n.finish();
    const job = await waitForJob(s.admin, id, 'complete');
    t.same(job.nodes, { succeeded: ['rs-1'] }, 'the answer sent to the restarted server completes the job');
    t.same(n.problems, [], 'every server message verified');
  });
