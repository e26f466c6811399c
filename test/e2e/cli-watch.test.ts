// `cli job watch` and `cli job start --verbose` as child processes: they follow the job's event feed (reference
// 6.5), a line per node event, and end with the job's report.
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { jobIdOf, show, startCliFixture } from '../support/cli-fixture.js';
import { ack, poll, type TestNode } from '../support/test-node.js';

const { cli, available, nodes, server } = await startCliFixture(t, ['w1', 'w2']);
const [n1, n2] = nodes as [TestNode, TestNode];

t.test('job start --verbose and job watch follow the job feed: a line per node event, then the report', async (t) => {
  await available('w1', 'w2');
  const started = await cli(['job', 'start', 'chef-client', 'w1', 'w2', '--verbose']);
  t.equal(started.code, 0, show(started));
  for (const line of ['w1 quorum_vote success', 'w2 run_start', 'w1 run_complete success', 'w2 run_complete success'])
    t.match(started.stdout, new RegExp(`^\\d\\d:\\d\\d:\\d\\d ${line}$`, 'm'), `the feed shows ${line}`);
  t.match(started.stdout, /^Status: +complete$/m);

  // A job that keeps running until it is aborted: watch shows it live, and ends with the abort.
  await available('w1', 'w2');
  n1.script = { run: ack() };
  n2.script = { run: ack() };
  const nowait = await cli(['job', 'start', 'sleep', 'w1', 'w2', '--nowait']);
  const id = jobIdOf(nowait);
  const watching = cli(['job', 'watch', id, '--verbose']);
  await poll(
    'both nodes to run',
    async () => {
      const s = await cli(['job', 'status', id, '-F', 'json']);
      const job = JSON.parse(s.stdout) as { nodes: Record<string, string[]> };
      return job.nodes.running?.length === 2 ? true : undefined;
    },
    10_000,
  );
  t.equal((await cli(['job', 'abort', id])).code, 0);
  const watched = await watching;
  t.equal(watched.code, 1, `an aborted job is not a success\n${show(watched)}`);
  t.match(watched.stdout, /^\d\d:\d\d:\d\d w1 run_start$/m, 'the runs seen live');
  t.match(watched.stdout, /^aborted: 0 voting, 0 ready, 0 running, 2 of 2 finished \(2 aborted\)$/m);
  t.match(watched.stdout, /^Status: +aborted$/m);
  const done = await cli(['job', 'watch', id]);
  t.match(done.stdout, /^Status: +aborted$/m, 'a finished job is reported at once');
  n1.script = {};
  n2.script = {};
});

t.test('where the feed is refused (a proxy in the way), job start and job watch poll instead', async (t) => {
  // A proxy that passes every request to the server except the feeds, which it answers as an older server would.
  const proxy = createServer((req, res) => {
    if ((req.url ?? '').includes('/job_status_feed')) {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":["not found"]}');
      feedsRefused += 1;
      return;
    }
    const upstream = httpRequest(
      new URL(req.url ?? '/', server.url),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  let feedsRefused = 0;
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => proxy.close());
  const via = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/organizations/default`;
  await available('w1', 'w2');
  const r = await cli([
    'job',
    'start',
    'chef-client',
    'w1',
    'w2',
    '--verbose',
    '--poll-interval',
    '0.1',
    '--server-url',
    via,
  ]);
  t.equal(r.code, 0, show(r));
  t.ok(feedsRefused > 0, 'the cli asked for the feed first');
  t.notMatch(r.stdout, /quorum_vote/, 'no node events without the feed');
  t.match(r.stdout, /^complete: 0 voting, 0 ready, 0 running, 2 of 2 finished \(2 succeeded\)$/m, 'polled to the end');
  t.match(r.stdout, /^Status: +complete$/m);
  const watched = await cli(['job', 'watch', jobIdOf(r), '--server-url', via]);
  t.equal(watched.code, 0, show(watched));
  t.match(watched.stdout, /^Status: +complete$/m);
});
