// One user opening 1,000 event streams: those past max_event_streams get 429 naming the setting, and nothing else
// notices: another user's stream follows a job from its start to its end, and the nodes run it.
import t from 'tap';
import { createMember } from '../support/api-fixtures.js';
import { eventsOf, readFeed } from '../support/feeds.js';
import { startJob, waitForJob } from '../support/push-api.js';
import { startTestServer } from '../support/server.js';
import { poll, startTestNode } from '../support/test-node.js';

const STREAMS = 1000;
const CAP = 20;
const FEED = '/organizations/default/pushy/job_status_feed';

t.test('streams past max_event_streams get 429; another user, the nodes and a job are unaffected', async (t) => {
  // Every stream is a connection from this one address: the per-address cap is set past them.
  const s = await startTestServer(t, 'file', {
    heartbeat_interval: 100,
    max_event_streams: CAP,
    max_connections_per_address: 5000,
  });
  const nodes = [await startTestNode(s, 'cap-1'), await startTestNode(s, 'cap-2')];
  t.teardown(() => nodes.forEach((n) => n.stop()));
  const other = await createMember(t, s, 'default', 'other-reader', 2);

  const abort = new AbortController();
  t.teardown(() => abort.abort());
  const answers = await Promise.all(Array.from({ length: STREAMS }, () => s.admin.stream(FEED, abort.signal)));
  const open = answers.filter((r) => r.status === 200);
  const refused = answers.filter((r) => r.status === 429);
  t.equal(open.length, CAP, `${CAP} streams are open`);
  t.equal(refused.length, STREAMS - CAP, 'every other one is refused with 429');
  const bodies = await Promise.all(refused.map((r) => r.json() as Promise<{ error: string[] }>));
  t.ok(
    bodies.every((b) => /max_event_streams/.test(b.error[0] ?? '')),
    'each refusal names the setting (max_event_streams)',
  );

  const feed = readFeed(other, FEED, {
    until: (items) => eventsOf(items).some((e) => e.event === 'job_complete'),
    opened: async () => {
      const id = await startJob(s.admin, { command: 'chef-client', nodes: nodes.map((n) => n.name) });
      t.same((await waitForJob(s.admin, id, 'complete')).nodes, { succeeded: ['cap-1', 'cap-2'] }, 'the job runs');
    },
  });
  const read = await feed;
  t.equal(read.status, 200, "another user's stream opens");
  t.same(
    eventsOf(read.items).map((e) => e.event),
    ['start', 'job_complete'],
    'and follows the job from its start to its end',
  );

  const limits = (await s.admin.request('GET', '/_status')).body as {
    limits: { http: { event_streams: number; refused: Record<string, number> } };
  };
  t.equal(limits.limits.http.refused.max_event_streams, STREAMS - CAP, 'GET /_status counts the refusals');
  abort.abort();
  await poll('the closed streams to be let go', async () => {
    const now = (await s.admin.request('GET', '/_status')).body as typeof limits;
    return now.limits.http.event_streams === 0 ? true : undefined;
  });
  const again = new AbortController();
  t.teardown(() => again.abort());
  t.equal((await s.admin.stream(FEED, again.signal)).status, 200, 'once closed, they count no more');
});
