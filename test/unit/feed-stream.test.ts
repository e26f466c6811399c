// The feeds without a server: what a reader of a job or organization feed gets from the hub, a slow reader
// dropped with a final comment while the job's feed goes on, and the organization feed's retention.
import t from 'tap';
import { readEventStream, type StreamItem } from '../../src/api/event-stream.js';
import type { JobNote } from '../../src/api/job-feed.js';
import { FeedHub, type FeedSettings } from '../../src/feeds/feed-hub.js';
import { jobFeedResponse, orgFeedResponse } from '../../src/http/feed-stream.js';
import type { JobBody } from '../../src/api/push-jobs.js';

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const SUMMARY = { id: 'j1', status: 'complete', nodes: { succeeded: ['a'] } } as unknown as JobBody;

function hub(over: Partial<FeedSettings> = {}, clock = { now: T0 }): FeedHub {
  return new FeedHub({
    lingerMs: 50,
    orgExpirationMs: 60_000,
    keepAliveMs: 60_000,
    readerAllowance: 10,
    now: () => clock.now,
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
  const feeds = hub();
  feeds.jobStarted('o', 'j1');
  feeds.publish('o', 'j1', [start, vote('a')], T0);
  const res = jobFeedResponse(feeds, 'o', 'j1', undefined, SUMMARY);
  t.equal(res.headers.get('content-type'), 'text/event-stream');
  const reading = readAll(res);
  feeds.publish('o', 'j1', [done], T0 + 5);
  feeds.publish('o', 'j1', [vote('late')], T0 + 6);
  t.same(ids(await reading), ['job-1', 'job-2', 'job-3'], 'nothing after job_complete');
  await new Promise((r) => setTimeout(r, 80));
  const after = await readAll(jobFeedResponse(feeds, 'o', 'j1', 'job-2', SUMMARY));
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
  const fresh = await readAll(jobFeedResponse(feeds, 'o', 'j1', 'job-49', SUMMARY), 2);
  t.same(ids(fresh), ['job-50', 'job-51'], 'the feed itself lost nothing');
});

t.test('the organization feed keeps start and job_complete for org_feed_expiration', async (t) => {
  const clock = { now: T0 };
  const feeds = hub({}, clock);
  feeds.publish('o', 'j1', [start, vote('a'), done], T0);
  clock.now = T0 + 30_000;
  feeds.publish('o', 'j2', [start], clock.now);
  const all = await readAll(orgFeedResponse(feeds, 'o', 'org-77'), 4);
  t.same(
    all.map((i) => (i.kind === 'event' ? `${i.value.id} ${i.value.event}` : i.text)),
    ['start_id start_of_history', 'org-1 start', 'org-2 job_complete', 'org-3 start'],
    'an unknown id: start_of_history, then every event kept, votes left out',
  );
  const resumed = await readAll(orgFeedResponse(feeds, 'o', 'org-2'), 1);
  t.same(ids(resumed), ['org-3']);
  clock.now = T0 + 61_000;
  const expired = await readAll(orgFeedResponse(feeds, 'o', 'org-1'), 2);
  t.same(
    expired.map((i) => (i.kind === 'event' ? i.value.id : i.text)),
    ['start_id', 'org-3'],
    'an expired id starts over from what is kept',
  );
  t.match(JSON.parse(expired[0]?.kind === 'event' ? expired[0].value.data : '{}'), {
    timestamp: '2026-11-24 09:00:01.000000Z',
  });
});

t.test('a quiet feed sends keepalive comments; a deleted organization ends its feeds', async (t) => {
  const feeds = hub({ keepAliveMs: 20 });
  const items = await readAll(orgFeedResponse(feeds, 'o', undefined), 2);
  t.same(items, [
    { kind: 'comment', text: 'keepalive' },
    { kind: 'comment', text: 'keepalive' },
  ]);
  feeds.jobStarted('o', 'j9');
  const reading = readAll(jobFeedResponse(feeds, 'o', 'j9', undefined, SUMMARY));
  feeds.forgetOrg('o');
  t.same(ids(await reading), [], 'the job feed of a deleted organization ends');
});
