// The job and organization feeds (reference 6.5) over real HTTP, with jobs run by scripted nodes over real ZeroMQ:
// what a reader of each feed sees, resumption with Last-Event-ID, the summary once a job's actor is gone, org
// scoping, permissions, keepalives.
import t from 'tap';
import { FEED_EVENT_DATA, isFeedEventName } from '../../src/api/job-feed.js';
import { createMember, createOrg } from '../support/api-fixtures.js';
import { eventsOf, readFeed } from '../support/feeds.js';
import { startJob, waitForJob } from '../support/push-api.js';
import { startTestServer } from '../support/server.js';
import { nack, poll, startTestNode, type TestNode } from '../support/test-node.js';

const FAST = {
  heartbeat_interval: 100,
  offline_threshold: 8,
  online_threshold: 2,
  voting_timeout: 2,
  keep_alive_time: 1,
};
const FEED = '/organizations/default/pushy/job_status_feed';
const TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}Z$/;

t.test('job and organization feeds', async (t) => {
  const s = await startTestServer(t, 'file', FAST);
  const nodes: TestNode[] = [];
  t.teardown(() => nodes.forEach((n) => n.stop()));
  for (const name of ['f-1', 'f-2', 'f-3']) nodes.push(await startTestNode(s, name));
  nodes.push(await startTestNode(s, 'f-no', { commit: nack('not_whitelisted') }));

  t.test('a request without Accept: text/event-stream gets 406', async (t) => {
    const res = await s.admin.request('GET', FEED);
    t.equal(res.status, 406);
    t.match(res.body, { error: [/text\/event-stream/] });
  });

  t.test('a job followed from its start: every event in order, then the stream ends', async (t) => {
    let id = '';
    const feed = await readFeed(s.admin, FEED, {
      until: (items) => eventsOf(items).some((e) => e.event === 'job_complete'),
      opened: async () => {
        id = await startJob(s.admin, { command: 'chef-client', nodes: ['f-1', 'f-2', 'f-3', 'f-no'], quorum: 3 });
      },
    });
    t.equal(feed.status, 200);
    const org = eventsOf(feed.items);
    t.same(
      org.map((e) => [e.event, e.data.job]),
      [
        ['start', id],
        ['job_complete', id],
      ],
      'the org feed shows the job start and end, naming the job',
    );
    t.match(org[1]?.data, { status: 'complete' });

    // The job's actor lingers a few seconds after the end: its feed replays the whole history and ends.
    const job = await readFeed(s.admin, `${FEED}/${id}`);
    t.ok(job.ended, 'the finished job feed ends by itself');
    t.equal(job.headers.get('x-accel-buffering'), 'no');
    const events = eventsOf(job.items);
    const incarnation = /^job-([a-z0-9]+)-1$/.exec(events[0]?.id ?? '')?.[1] ?? 'none';
    t.same(
      events.map((e) => e.id),
      events.map((_, i) => `job-${incarnation}-${i + 1}`),
      "ids are job-<the log's incarnation>-1, -2, ... in order",
    );
    t.ok(
      events.every((e) => TIMESTAMP.test(String(e.data.timestamp))),
      'every event carries the feed timestamp',
    );
    for (const e of events) {
      t.ok(isFeedEventName(e.event), `${e.event} is a feed event`);
      if (isFeedEventName(e.event)) t.ok(FEED_EVENT_DATA[e.event].safeParse(e.data).success, `${e.event} data parses`);
    }
    t.match(events[0], {
      event: 'start',
      data: { command: 'chef-client', quorum: 3, node_count: 4, user: 'admin', run_timeout: 3600 },
    });
    const of = (name: string) => events.filter((e) => e.event === name).map((e) => e.data);
    t.same(
      of('quorum_vote')
        .map((d) => `${String(d.node)}:${String(d.status)}`)
        .sort(),
      ['f-1:success', 'f-2:success', 'f-3:success', 'f-no:failure'],
      'one vote per node, the refusal a failure',
    );
    t.same(
      of('run_start')
        .map((d) => d.node)
        .sort(),
      ['f-1', 'f-2', 'f-3'],
    );
    t.same(
      of('run_complete')
        .map((d) => `${String(d.node)}:${String(d.status)}`)
        .sort(),
      ['f-1:success', 'f-2:success', 'f-3:success'],
    );
    const order = events.map((e) => e.event);
    t.ok(
      order.lastIndexOf('quorum_vote') < order.indexOf('quorum_succeeded') &&
        order.indexOf('quorum_succeeded') < order.indexOf('run_start'),
      'votes, then quorum_succeeded, then the runs',
    );
    t.same(events.at(-1), {
      event: 'job_complete',
      id: `job-${incarnation}-${events.length}`,
      data: events.at(-1)?.data,
    });
    t.match(events.at(-1)?.data, { status: 'complete' });

    const resumed = await readFeed(s.admin, `${FEED}/${id}`, { lastEventId: events[2]?.id ?? '' });
    t.same(
      eventsOf(resumed.items).map((e) => e.id),
      events.slice(3).map((e) => e.id),
      'Last-Event-ID resumes after that event',
    );
    const unknown = await readFeed(s.admin, `${FEED}/${id}`, { lastEventId: `job-${incarnation}-999` });
    t.equal(eventsOf(unknown.items).length, events.length, 'an unknown id replays everything');
    const earlier = await readFeed(s.admin, `${FEED}/${id}`, { lastEventId: 'job-3' });
    t.equal(eventsOf(earlier.items).length, events.length, 'so does an id of an earlier log (job-3, an older server)');

    // Once the actor is gone the stored record answers: one summary event, Last-Event-ID or not.
    const summary = await poll(
      'the job feed to answer with a summary',
      async () => {
        const read = await readFeed(s.admin, `${FEED}/${id}`, { lastEventId: 'job-2' });
        const all = eventsOf(read.items);
        return all.length === 1 && all[0]?.event === 'summary' ? read : undefined;
      },
      15_000,
    );
    const [only] = eventsOf(summary.items);
    t.equal(only?.id, 'job-1');
    t.match(only?.data, { id, status: 'complete', nodes: { succeeded: ['f-1', 'f-2', 'f-3'], nacked: ['f-no'] } });
    t.ok(summary.ended, 'the summary ends the stream');
  });

  t.test('the org feed: resumption, start_of_history, keepalives', async (t) => {
    const first = await startJob(s.admin, { command: 'chef-client', nodes: ['f-1'] });
    await waitForJob(s.admin, first, 'complete');
    const fresh = await readFeed(s.admin, FEED, {
      until: (items) => items.some((i) => i.kind === 'comment' && i.text === 'keepalive'),
    });
    t.same(eventsOf(fresh.items), [], 'without Last-Event-ID there is no history');
    t.ok(
      fresh.items.some((i) => i.kind === 'comment' && i.text === 'keepalive'),
      'a quiet feed sends :keepalive after keep_alive_time',
    );

    const old = await readFeed(s.admin, FEED, {
      lastEventId: 'org-0',
      until: (items) => eventsOf(items).some((e) => e.event === 'job_complete' && e.data.job === first),
    });
    const history = eventsOf(old.items);
    t.match(history[0], { event: 'start_of_history', id: 'start_id' }, 'an unknown id starts with start_of_history');
    t.ok(TIMESTAMP.test(String(history[0]?.data.timestamp)), 'start_of_history is stamped with the horizon');
    const startOfFirst = history.find((e) => e.event === 'start' && e.data.job === first);
    t.ok(startOfFirst, 'the retained start of the job follows');

    const after = await readFeed(s.admin, FEED, {
      lastEventId: startOfFirst?.id,
      until: (items) => eventsOf(items).length > 0,
    });
    t.match(eventsOf(after.items)[0], { event: 'job_complete', data: { job: first, status: 'complete' } });
  });

  t.test("a rollout's waves on the org feed: wave_start and wave_end, naming the job", async (t) => {
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['f-1', 'f-2'], rollout: { waves: [1] } });
    await waitForJob(s.admin, id, 'complete');
    const read = await readFeed(s.admin, FEED, {
      lastEventId: 'org-0',
      until: (items) => eventsOf(items).some((e) => e.event === 'job_complete' && e.data.job === id),
    });
    const waves = eventsOf(read.items)
      .filter((e) => e.data.job === id && (e.event === 'wave_start' || e.event === 'wave_end'))
      .map((e) => `${e.event} ${String(e.data.wave)}${e.event === 'wave_end' ? ` ${String(e.data.status)}` : ''}`);
    t.same(waves, ['wave_start 1', 'wave_end 1 complete', 'wave_start 2', 'wave_end 2 complete']);
  });

  t.test('feeds are scoped to the organization and its readers', async (t) => {
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['f-2'] });
    await waitForJob(s.admin, id, 'complete');
    await createOrg(t, s, 'feedother');
    const missing = await readFeed(s.pivotal, `/organizations/feedother/pushy/job_status_feed/${id}`);
    t.equal(missing.status, 404, "another organization's job is not found through this one");
    const unknown = await readFeed(s.admin, `${FEED}/00000000000000000000000000000000`);
    t.equal(unknown.status, 404);
    const stranger = await createMember(t, s, 'feedother', 'feedstranger');
    const refused = await readFeed(stranger, FEED);
    t.equal(refused.status, 403, 'a user outside the organization may not read its feed');
    const refusedJob = await readFeed(stranger, `${FEED}/${id}`);
    t.equal(refusedJob.status, 403);
  });
});
