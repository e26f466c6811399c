// Which process answers a request in a cluster: the owner of the organization's partition answers it here; while
// nobody owns it, or while this process lets it go, the client is told to try again rather than told it is gone.
import t from 'tap';
import type { Owner } from '../../src/cluster/cluster-member.js';
import { FORWARDED_BY, forwarding, type Owners } from '../../src/cluster/forward.js';
import type { Member } from '../../src/cluster/members.js';
import type { Partition } from '../../src/store/partitions.js';

const LIMIT = { maxBodyBytes: () => 1024, tooLarge: () => new Response('too large', { status: 413 }) };
const OTHER: Member = { id: 'other', url: 'http://other', host: 'other', pid: 2, started_at: 0 };
const NODE = 'http://api/organizations/default/nodes/n1';

/** Owners that answer `owner` for every partition and serve it while `serving` says so. */
function owners(owner: Owner, serving: () => boolean): Owners {
  return { id: 'me', ownerOf: () => Promise.resolve(owner), serves: (_: Partition) => serving() };
}

t.test('a request for an organization served here is answered here, as it is', async (t) => {
  const served = forwarding(
    owners({ kind: 'here' }, () => true),
    () => new Response('{"name":"n1"}', { status: 200 }),
    LIMIT,
  );
  const answer = await served(new Request(NODE), {});
  t.equal(answer.status, 200);
  t.equal(await answer.text(), '{"name":"n1"}');
  const missing = forwarding(
    owners({ kind: 'here' }, () => true),
    () => new Response('{"error":["not found"]}', { status: 404 }),
    LIMIT,
  );
  t.equal((await missing(new Request(NODE), {})).status, 404, 'a 404 of a partition still served here stands');
});

t.test('a 404 given while the partition was let go says to try again', async (t) => {
  let serving = true;
  const handler = forwarding(
    owners({ kind: 'here' }, () => serving),
    () => {
      // The organization left this process while the request was on its way to it.
      serving = false;
      return new Response('{"error":["organization \'default\' does not exist."]}', { status: 404 });
    },
    LIMIT,
  );
  const answer = await handler(new Request(NODE), {});
  t.equal(answer.status, 503);
  t.equal(answer.headers.get('retry-after'), '1');
  t.match(await answer.json(), { error: [/try again/] });
});

t.test('with no owner, or forwarded once already, the client is told to try again', async (t) => {
  let asked = 0;
  const local = () => {
    asked += 1;
    return new Response('', { status: 200 });
  };
  const none = forwarding(
    owners({ kind: 'none' }, () => false),
    local,
    LIMIT,
  );
  const unowned = await none(new Request(NODE), {});
  t.equal(unowned.status, 503);
  t.equal(unowned.headers.get('retry-after'), '1');
  const elsewhere = forwarding(
    owners({ kind: 'member', member: OTHER }, () => false),
    local,
    LIMIT,
  );
  const again = await elsewhere(new Request(NODE, { headers: { [FORWARDED_BY]: 'third' } }), {});
  t.equal(again.status, 503, 'a forwarded request is not sent round the cluster');
  t.equal(asked, 0, 'and neither is answered here');
});

t.test('requests of no organization are answered here, whoever owns what', async (t) => {
  const handler = forwarding(
    owners({ kind: 'none' }, () => false),
    () => new Response('{}', { status: 200 }),
    LIMIT,
  );
  t.equal((await handler(new Request('http://api/_status'), {})).status, 200);
  t.equal((await handler(new Request('http://api/organizations'), {})).status, 200, 'the list of organizations');
});

t.test('while the owner cannot be looked up (Redis away), the client is told to try again', async (t) => {
  const away: Owners = { id: 'me', ownerOf: () => Promise.reject(new Error('Redis is away')), serves: () => false };
  const handler = forwarding(away, () => new Response('', { status: 200 }), LIMIT);
  const answer = await handler(new Request(NODE, { method: 'PUT', body: '{}' }), {});
  t.equal(answer.status, 503, 'not a bare 500');
  t.equal(answer.headers.get('retry-after'), '1');
  t.same(await answer.json(), { error: ['The data store is unavailable; nothing was changed. Try again.'] });
});
