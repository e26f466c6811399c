// The feeds without a server: what a reader of a job or organization feed gets from the hub, a slow reader
// dropped with a final comment while the job's feed goes on, one whose connection stays full dropped after
// keep_alive_time, and the organization feed's retention. The linger, keepalive and stall timers run on a manual
// clock, moved by the tests.
import t from 'tap';
import { readEventStream, type StreamItem } from '../../src/api/event-stream.js';
import type { JobNote } from '../../src/api/job-feed.js';
import { FeedHub, type FeedEvent, type FeedSettings, type OrgFeedHistory } from '../../src/feeds/feed-hub.js';
import { jobFeedResponse, orgFeedResponse } from '../../src/http/feed-stream.js';
import type { JobBody } from '../../src/api/push-jobs.js';
import { ManualClock } from '../support/manual-clock.js';

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const SUMMARY = { id: 'j1', status: 'complete', nodes: { succeeded: ['a'] } } as unknown as JobBody;

function hub(over: Partial<FeedSettings> = {}, clock = { now: T0 }, timers = new ManualClock()): FeedHub {
  return new FeedHub({
    lingerMs: 50,
    orgExpirationMs: 60_000,
    keepAliveMs: 60_000,
    readerAllowance: 10,
    now: () => clock.now,
    timers,
    ...over,
  });
}

const vote = (node: string): JobNote => ({ event: 'quorum_vote', data: { node, status: 'success' } });
const start: JobNote = { event: 'start', data: { command: 'uptime', run_timeout: 60, quorum: 1, node_count: 1 } };
const done: JobNote = { event: 'job_complete', data: { status: 'complete' } };

async function readAll(res: Response, limit = Infinity): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  if (res.body === null) return items;
  for await (const item of readEventStream(res.body)) {
    items.push(item);
    if (items.length >= limit) break;
  }
  return items;
}

const ids = (items: StreamItem[]) => items.flatMap((i) => (i.kind === 'event' ? [i.value.id] : []));

t.test('a job feed replays its history and ends with the job', async (t) => {
  const timers = new ManualClock();
  const feeds = hub({}, undefined, timers);
  feeds.jobStarted('o', 'j1');
  feeds.publish('o', 'j1', [start, vote('a')], T0);
  const [id1, id2, id3] = [1, 2, 3].map((n) => feeds.jobLog('o', 'j1')?.idOf(n) ?? '');
  t.match(id1, /^job-[a-z0-9]+-1$/, 'ids name the log and the place in it');
  const res = jobFeedResponse(feeds, 'o', 'j1', undefined, SUMMARY);
  t.equal(res.headers.get('content-type'), 'text/event-stream');
  const reading = readAll(res);
  feeds.publish('o', 'j1', [done], T0 + 5);
  feeds.publish('o', 'j1', [vote('late')], T0 + 6);
  t.same(ids(await reading), [id1, id2, id3], 'nothing after job_complete');
  await timers.advance(49);
  const lingering = await readAll(jobFeedResponse(feeds, 'o', 'j1', id2, SUMMARY));
  t.same(ids(lingering), [id3], 'during the linger, the events after the one named');
  await timers.advance(1);
  const after = await readAll(jobFeedResponse(feeds, 'o', 'j1', id2, SUMMARY));
  t.match(after, [{ kind: 'event', value: { event: 'summary', id: 'job-1' } }], 'after the linger, the summary');
});

t.test('a reader that falls too far behind is dropped with a final comment; the feed goes on', async (t) => {
  const feeds = hub({ readerAllowance: 5 });
  feeds.jobStarted('o', 'j1');
  feeds.publish('o', 'j1', [start], T0);
  const slow = jobFeedResponse(feeds, 'o', 'j1', undefined, SUMMARY);
  // Each event is far larger than the response buffer, so the stream stops pulling after the first few.
  const big = 'x'.repeat(40_000);
  for (let i = 0; i < 50; i += 1) feeds.publish('o', 'j1', [vote(`${big}${i}`)], T0 + i);
  const items = await readAll(slow);
  const last = items.at(-1);
  t.match(last, { kind: 'comment', text: /dropped/ }, 'the last item says why the stream ended');
  t.ok(ids(items).length < 51, `the slow reader got ${ids(items).length} of 51 events before it was dropped`);
  const jobId = (n: number) => feeds.jobLog('o', 'j1')?.idOf(n) ?? '';
  const fresh = await readAll(jobFeedResponse(feeds, 'o', 'j1', jobId(49), SUMMARY), 2);
  t.same(ids(fresh), [jobId(50), jobId(51)], 'the feed itself lost nothing');
});

t.test(
  'a reader whose connection stays full for keep_alive_time is dropped, and its stream counted closed',
  async (t) => {
    const timers = new ManualClock();
    const feeds = hub({ keepAliveMs: 100, readerAllowance: 10_000 }, undefined, timers);
    feeds.jobStarted('o', 'j1');
    const big = (n: number): JobNote => ({
      event: 'quorum_vote',
      data: { node: `${n}`.padEnd(20_000, 'x'), status: 'success' },
    });
    feeds.publish('o', 'j1', [start, ...Array.from({ length: 10 }, (_, i) => big(i))], T0);
    let stalled = 0;
    let closed = 0;
    // Never read: the stream fills to its high-water mark and stops pulling, as a full connection makes it.
    jobFeedResponse(feeds, 'o', 'j1', undefined, SUMMARY, {
      stalled: () => (stalled += 1),
      closed: () => (closed += 1),
    });
    await timers.advance(99);
    t.same([stalled, closed], [0, 0], 'a full connection is kept until keep_alive_time has passed');
    await timers.advance(1);
    t.equal(stalled, 1, 'then the stalled reader is dropped');
    t.equal(closed, 1, 'and its stream no longer counts');

    // A reader that keeps reading, however slowly, is never dropped for it.
    let readerStalled = false;
    const res = jobFeedResponse(feeds, 'o', 'j1', undefined, SUMMARY, { stalled: () => (readerStalled = true) });
    feeds.publish('o', 'j1', [done], T0 + 1);
    t.equal((await readAll(res)).length, 12, 'every event reaches the reader that reads');
    t.notOk(readerStalled, 'and it was not dropped');
  },
);

t.test('the organization feed keeps start and job_complete for org_feed_expiration', async (t) => {
  const clock = { now: T0 };
  const feeds = hub({}, clock);
  feeds.publish('o', 'j1', [start, vote('a'), done], T0);
  clock.now = T0 + 30_000;
  feeds.publish('o', 'j2', [start], clock.now);
  const orgId = (n: number) => feeds.orgLog('o').idOf(n);
  const all = await readAll(orgFeedResponse(feeds, 'o', 'org-77'), 4);
  t.same(
    all.map((i) => (i.kind === 'event' ? `${i.value.id} ${i.value.event}` : i.text)),
    ['start_id start_of_history', `${orgId(1)} start`, `${orgId(2)} job_complete`, `${orgId(3)} start`],
    'an unknown id: start_of_history, then every event kept, votes left out',
  );
  const resumed = await readAll(orgFeedResponse(feeds, 'o', orgId(2)), 1);
  t.same(ids(resumed), [orgId(3)]);
  clock.now = T0 + 61_000;
  const expired = await readAll(orgFeedResponse(feeds, 'o', orgId(1)), 2);
  t.same(
    expired.map((i) => (i.kind === 'event' ? i.value.id : i.text)),
    ['start_id', orgId(3)],
    'an expired id starts over from what is kept',
  );
  t.match(JSON.parse(expired[0]?.kind === 'event' ? expired[0].value.data : '{}'), {
    timestamp: '2026-11-24 09:00:01.000000Z',
  });
});

t.test("after the organization moved to another process, the earlier owner's ids are unknown there", async (t) => {
  // Two hubs: the feeds of the organization's earlier owner and of the process that took it over, each from 1.
  const before = hub();
  before.publish('o', 'j1', [start, done], T0);
  const lastSeen = before.orgLog('o').idOf(2);
  const oldJobId = before.jobLog('o', 'j1')?.idOf(1) ?? '';
  const after = hub();
  after.jobStarted('o', 'j1');
  after.publish('o', 'j1', [vote('a'), done], T0 + 1);
  after.publish('o', 'j2', [start], T0 + 2);
  const org = await readAll(orgFeedResponse(after, 'o', lastSeen), 3);
  t.same(
    org.map((i) => (i.kind === 'event' ? `${i.value.id} ${i.value.event}` : i.text)),
    ['start_id start_of_history', `${after.orgLog('o').idOf(1)} job_complete`, `${after.orgLog('o').idOf(2)} start`],
    'the org feed starts over from what the new owner keeps, never resuming at an event of the same number',
  );
  const job = await readAll(jobFeedResponse(after, 'o', 'j1', oldJobId, SUMMARY));
  t.same(
    job.map((i) => (i.kind === 'event' ? i.value.event : i.text)),
    ['quorum_vote', 'job_complete'],
    'the job feed replays every event the new owner has',
  );
});

t.test("a new owner that starts from the earlier owner's history resumes its readers exactly", async (t) => {
  const kept: FeedEvent[] = [];
  const deleted: string[] = [];
  const history: OrgFeedHistory = { kept: (_org, e) => kept.push(e), deleted: (org) => deleted.push(org) };
  const clock = { now: T0 };
  const before = hub({}, clock);
  before.keepHistoryIn(history);
  before.publish('o', 'j1', [start, vote('a'), done], T0);
  before.publish('o', 'j2', [start], T0 + 1);
  t.same(
    kept.map((e) => e.event),
    ['start', 'job_complete', 'start'],
    'the history gets what the org feed gets',
  );
  const [, lastSeen] = kept.map((e) => e.id);

  const after = hub({}, clock);
  after.resumeOrg('o', kept);
  after.publish('o', 'j2', [done], T0 + 2);
  const resumed = await readAll(orgFeedResponse(after, 'o', lastSeen), 2);
  t.same(
    resumed.map((i) => (i.kind === 'event' ? `${i.value.event} ${JSON.parse(i.value.data).job}` : i.text)),
    ['start j2', 'job_complete j2'],
    "the earlier owner's id resumes right after its event, then the new owner's events follow",
  );
  const unknown = await readAll(orgFeedResponse(after, 'o', 'org-gone-9'), 1);
  t.match(unknown, [{ kind: 'event', value: { event: 'start_of_history' } }], 'an id the history lacks is unknown');

  after.resumeOrg('o', []);
  const again = await readAll(orgFeedResponse(after, 'o', lastSeen), 1);
  t.same(ids(again), [kept[2]?.id], 'a log that has started is not replaced');
  clock.now = T0 + 60_001;
  const expired = await readAll(orgFeedResponse(after, 'o', kept[0]?.id), 1);
  t.match(expired, [{ kind: 'event', value: { event: 'start_of_history' } }], 'inherited events expire like any');

  before.orgDeleted('o');
  t.same(deleted, ['o'], "a deleted organization's history goes too");
});

t.test('a quiet feed sends keepalive comments; a deleted organization ends its feeds', async (t) => {
  const timers = new ManualClock();
  const feeds = hub({ keepAliveMs: 20 }, undefined, timers);
  const got: StreamItem[] = [];
  const keptAlive = (async () => {
    const body = orgFeedResponse(feeds, 'o', undefined).body;
    if (body === null) return;
    for await (const item of readEventStream(body)) if (got.push(item) >= 2) break;
  })();
  await timers.advance(19);
  t.same(got, [], 'nothing before keep_alive_time passes');
  await timers.advance(1);
  t.same(got, [{ kind: 'comment', text: 'keepalive' }], 'a keepalive once it has');
  await timers.advance(20);
  await keptAlive;
  t.same(got, [
    { kind: 'comment', text: 'keepalive' },
    { kind: 'comment', text: 'keepalive' },
  ]);
  feeds.jobStarted('o', 'j9');
  const reading = readAll(jobFeedResponse(feeds, 'o', 'j9', undefined, SUMMARY));
  feeds.forgetOrg('o');
  t.same(ids(await reading), [], 'the job feed of a deleted organization ends');
});
