// A feed log's event ids: each names the log's incarnation and the event's place, and a log knows only its own,
// so an id from an earlier log of the same job or organization (another process, before a hand-over) is unknown
// rather than taken for the event of the same number; unless the log started with the earlier log's events.
import t from 'tap';
import { FeedLog, newIncarnation } from '../../src/feeds/feed-log.js';

const event = (n: number) => ({ event: 'start', at: n, data: { n } });

t.test('ids carry the incarnation; a log finds its own and no other', async (t) => {
  const earlier = new FeedLog('org', 'aaa');
  const later = new FeedLog('org', 'bbb');
  for (let n = 1; n <= 3; n++) {
    earlier.append(event(n));
    later.append(event(n));
  }
  t.equal(earlier.at(2)?.id, 'org-aaa-2');
  t.equal(later.seqOf('org-bbb-2'), 2, 'its own id is found');
  t.equal(later.seqOf('org-aaa-2'), undefined, "the earlier log's id of the same number is not");
  t.equal(later.seqOf('org-2'), undefined, 'nor an id without an incarnation');
  t.equal(later.seqOf('job-bbb-2'), undefined, 'nor one of another kind of feed');
  t.equal(later.seqOf('org-bbb-4'), undefined, 'nor one not given yet');
  later.expire(2);
  t.equal(later.seqOf('org-bbb-1'), undefined, 'nor one dropped by age');
});

t.test('logs made at the same moment get different incarnations', async (t) => {
  const made = new Set(Array.from({ length: 10 }, () => newIncarnation(1_700_000_000_000)));
  t.equal(made.size, 10);
  for (const incarnation of made) t.match(incarnation, /^[a-z0-9]+$/, 'letters and digits only: safe in an SSE id');
  t.not(new FeedLog('job').incarnation, new FeedLog('job').incarnation);
});

t.test("a log started with an earlier log's events keeps their ids and numbers its own after them", async (t) => {
  const earlier = new FeedLog('org', 'aaa');
  for (let n = 1; n <= 3; n++) earlier.append(event(n));
  earlier.expire(2);
  const kept = [2, 3].map((n) => earlier.at(n)).filter((e) => e !== undefined);
  const later = new FeedLog('org', 'bbb', kept);
  t.same([later.at(1)?.id, later.at(2)?.id], ['org-aaa-2', 'org-aaa-3'], 'the earlier events, under their own ids');
  t.equal(later.seqOf('org-aaa-2'), 1, "the earlier log's ids are found");
  t.equal(later.seqOf('org-aaa-1'), undefined, 'but not one it did not hand over');
  t.equal(later.append(event(4)).id, 'org-bbb-3', 'its own events follow under its own ids');
  t.equal(later.seqOf('org-bbb-3'), 3);
  later.expire(3);
  t.equal(later.seqOf('org-aaa-2'), undefined, 'an inherited event dropped by age is unknown');
  t.equal(later.seqOf('org-aaa-3'), 2);
});
