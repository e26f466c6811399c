// A feed reader whose connection stays full for keep_alive_time is dropped (and its stream counted closed), while
// one that keeps reading, however slowly, is not. It waits on the stream's own keep_alive_time timer, so it lives
// here rather than with the feeds' unit tests.
import t from 'tap';
import { readEventStream, type StreamItem } from '../../src/api/event-stream.js';
import type { JobNote } from '../../src/api/job-feed.js';
import type { JobBody } from '../../src/api/push-jobs.js';
import { FeedHub } from '../../src/feeds/feed-hub.js';
import { jobFeedResponse } from '../../src/http/feed-stream.js';

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const SUMMARY = { id: 'j1', status: 'complete', nodes: { succeeded: ['a'] } } as unknown as JobBody;
const start: JobNote = { event: 'start', data: { command: 'uptime', run_timeout: 60, quorum: 1, node_count: 1 } };
const done: JobNote = { event: 'job_complete', data: { status: 'complete' } };

function hub(): FeedHub {
  return new FeedHub({
    lingerMs: 50,
    orgExpirationMs: 60_000,
    keepAliveMs: 100,
    readerAllowance: 10_000,
    now: () => T0,
  });
}

async function readAll(res: Response): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  if (res.body === null) return items;
  for await (const item of readEventStream(res.body)) items.push(item);
  return items;
}

t.test(
  'a reader whose connection stays full for keep_alive_time is dropped, and its stream counted closed',
  async (t) => {
    const feeds = hub();
    feeds.jobStarted('o', 'j1');
    const big = (n: number): JobNote => ({
      event: 'quorum_vote',
      data: { node: `${n}`.padEnd(20_000, 'x'), status: 'success' },
    });
    feeds.publish('o', 'j1', [start, ...Array.from({ length: 10 }, (_, i) => big(i))], T0);
    let stalled = 0;
    let closed = 0;
    const stalledOnce = new Promise<void>((resolve) => {
      // Never read: the stream fills to its high-water mark and stops pulling, as a full connection makes it.
      jobFeedResponse(feeds, 'o', 'j1', undefined, SUMMARY, {
        stalled: () => {
          stalled += 1;
          resolve();
        },
        closed: () => (closed += 1),
      });
    });
    await stalledOnce;
    t.equal(stalled, 1, 'the stalled reader is dropped');
    t.equal(closed, 1, 'and its stream no longer counts');

    // A reader that keeps reading, however slowly, is never dropped for it.
    let readerStalled = false;
    const res = jobFeedResponse(feeds, 'o', 'j1', undefined, SUMMARY, { stalled: () => (readerStalled = true) });
    feeds.publish('o', 'j1', [done], T0 + 1);
    t.equal((await readAll(res)).length, 12, 'every event reaches the reader that reads');
    t.notOk(readerStalled, 'and it was not dropped');
  },
);
