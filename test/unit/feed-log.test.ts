// A feed log's event ids: each names the log's incarnation and the event's place, and a log knows only its own,
// so an id from an earlier log of the same job or organization (another process, before a hand-over) is unknown
// rather than taken for the event of the same number.
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
