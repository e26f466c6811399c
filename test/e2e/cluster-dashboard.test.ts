// The dashboard and the feeds in a cluster of two real server processes on one Redis: a user signed in through one
// process is signed in on both (pages of an organization the other process owns included, forms and their CSRF
// tokens too), signing out through one signs out of both, and failed sign-ins through either count together. An
// organization feed read with a Last-Event-ID from before its owner was killed resumes right after that event at
// the new owner, which started the feed from the history the killed owner kept in Redis.
import t from 'tap';
import { partitionName, partitionOf } from '../../src/store/partitions.js';
import { jobEnd, ownerOf, startCluster, startJob, type Cluster } from '../support/cluster.js';
import { eventsOf, readFeed } from '../support/feeds.js';
import type { ServerProcess } from '../support/server-process.js';
import { UiVisitor } from '../support/ui-visitor.js';

const DEFAULT_PARTITION = partitionName(partitionOf('default'));
const PASSWORD = 'secret123';
const ORG_FEED = '/organizations/default/pushy/job_status_feed';

const c: Cluster = await startCluster(t, 2);
const owner = await ownerOf(c.servers, DEFAULT_PARTITION, 30_000);
const other = c.servers.find((s) => s !== owner) as ServerProcess;

t.before(async () => {
  const pivotal = await c.pivotal(other);
  const must = async (what: string, status: number, res: Promise<{ status: number; body: unknown }>) => {
    const r = await res;
    if (r.status !== status) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  const olga = { username: 'olga', email: 'olga@example.com', display_name: 'olga', password: PASSWORD };
  await must('create olga', 201, pivotal.request('POST', '/users', olga));
  await must('olga joins default', 201, pivotal.request('POST', '/organizations/default/users', { username: 'olga' }));
  const admins = { actors: { users: ['admin', 'olga'] } };
  await must('olga joins admins', 200, pivotal.request('PUT', '/organizations/default/groups/admins', admins));
  for (const name of ['web1', 'web2']) {
    const node = { name, json_class: 'Chef::Node', chef_type: 'node' };
    await must(`node ${name}`, 201, pivotal.request('POST', '/organizations/default/nodes', node));
  }
});

t.test('signed in through one process, signed in on every process; signed out through one, out of all', async (t) => {
  // Signed in through the process that does not own `default`, so that its pages are answered by another process.
  const here = new UiVisitor(other.url);
  const signedIn = await here.signIn('olga', PASSWORD);
  t.equal(signedIn.status, 303, 'signed in through one process');
  const session = here.cookie('infra_session') ?? '';
  const there = here.through(owner.url);

  const orgs = await there.get('/ui/orgs');
  t.equal(orgs.status, 200, 'the organization list through the other process');
  t.match(orgs.html, /href="\/ui\/orgs\/default\/nodes">default</);
  for (const [name, v] of [
    ['the owner', there],
    ['a process passing it to the owner', here],
  ] as const) {
    const nodes = await v.get('/ui/orgs/default/nodes');
    t.equal(nodes.status, 200, `the node grid through ${name}`);
    t.match(nodes.html, 'data-node="web1"');
  }

  // A form from a page of one process, posted through the other: the session's CSRF token is the cluster's.
  await there.get('/ui/orgs/default/jobs');
  const started = await there
    .through(other.url)
    .post('/ui/orgs/default/jobs', { command: 'hello', nodes: 'web1 web2' });
  t.equal(started.status, 303, 'a job started with a form posted through the process that does not own it');
  const id = /\/jobs\/([0-9a-f]{32})$/.exec(started.location)?.[1] ?? '';
  t.not(id, '', started.location);
  const job = await jobEnd(await c.admin(owner), id, 30_000);
  t.equal(job.status, 'quorum_failed', 'the job ran (its nodes have no client)');
  const feed = await here.get(`/ui/orgs/default/jobs/${id}/events`, 'text/event-stream');
  t.equal(feed.status, 200, "the job's feed, passed on to the owner");
  t.match(feed.html, /^event: (start|summary)\nid: job-/);

  const out = await there.post('/ui/sign-out', {});
  t.equal(out.status, 303, 'signed out through the owner');
  for (const path of ['/ui/orgs', '/ui/orgs/default/nodes']) {
    const stale = await fetch(new URL(path, other.url), {
      headers: { Cookie: `infra_session=${session}`, Accept: 'text/html' },
      redirect: 'manual',
    });
    t.equal(stale.status, 303, `the old cookie opens nothing through the other process: ${path}`);
    t.match(stale.headers.get('location'), /^\/ui\/sign-in\?next=/);
  }
});

t.test('failed sign-ins through either process count together', async (t) => {
  for (let i = 1; i <= 5; i++) {
    const through = i % 2 === 0 ? owner : other;
    t.equal((await new UiVisitor(through.url).signIn('olga', `guess-${i}`)).status, 401, `guess ${i}`);
  }
  for (const s of [owner, other]) {
    const page = await new UiVisitor(s.url).signIn('olga', PASSWORD);
    t.equal(page.status, 429, 'the right password waits on both processes');
    t.match(page.html, /Too many failed sign-ins/);
  }
});

t.test('an org feed read with a Last-Event-ID from before its owner was killed resumes at the new owner', async (t) => {
  const admin = await c.admin(other);
  let id = '';
  const before = await readFeed(admin, ORG_FEED, {
    opened: async () => (id = await startJob(admin, 'hello', ['web1'])),
    until: (items) => eventsOf(items).some((e) => e.event === 'job_complete'),
    timeoutMs: 30_000,
  });
  const seen = eventsOf(before.items);
  t.same(
    seen.map((e) => [e.event, e.data.job]),
    [
      ['start', id],
      ['job_complete', id],
    ],
  );
  // The reader saw the job start, then lost its connection with the owner.
  const [startSeen, completeSeen] = seen;
  t.match(startSeen?.id, /^org-[a-z0-9]+-\d+$/, 'ids name the log they come from');

  process.kill(owner.pid, 'SIGKILL');
  await ownerOf([other], DEFAULT_PARTITION, 20_000);
  const survivor = await c.admin(other);
  let next = '';
  const resumed = await readFeed(survivor, ORG_FEED, {
    lastEventId: startSeen?.id ?? '',
    opened: async () => (next = await startJob(survivor, 'hello', ['web2'])),
    until: (items) => eventsOf(items).some((e) => e.event === 'job_complete' && e.data.job === next),
    timeoutMs: 30_000,
  });
  const got = eventsOf(resumed.items);
  t.same(
    got.map((e) => [e.event, e.data.job]),
    [
      ['job_complete', id],
      ['start', next],
      ['job_complete', next],
    ],
    "the new owner resumes right after the event named: the rest of the killed owner's, then its own",
  );
  t.equal(got[0]?.id, completeSeen?.id, 'under the id the killed owner gave it');
  t.notMatch(got[1]?.id, new RegExp(`^${(startSeen?.id ?? '').replace(/-\d+$/, '')}-`), 'its own under ids of its own');

  const unknown = await readFeed(survivor, ORG_FEED, {
    lastEventId: 'org-nosuchlog-1',
    until: (items) => eventsOf(items).some((e) => e.event === 'job_complete' && e.data.job === next),
  });
  const history = eventsOf(unknown.items);
  t.match(history[0], { event: 'start_of_history', id: 'start_id' }, 'an id no owner gave gets start_of_history');
  t.ok(
    history.some((e) => e.id === startSeen?.id),
    "then every event kept, the killed owner's included",
  );
});
