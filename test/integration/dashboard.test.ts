// The web dashboard over real HTTP: sign-in with a user's password, the session cookie, CSRF tokens on every form,
// brute-force limits, and pages allowed or refused by the organization's own ACL checks. The API stays as it was.
import t from 'tap';
import { jobListSchema } from '../../src/api/push-jobs.js';
import { createMember, createUser, expectStatus } from '../support/api-fixtures.js';
import { waitForEnd } from '../support/push-api.js';
import { startTestServer } from '../support/server.js';
import { setCookieLine, UiVisitor } from '../support/ui-visitor.js';

const s = await startTestServer(t, 'file');
const ORG = '/organizations/default';
const PASSWORD = 'secret123'; // what the fixtures give every user they create

t.before(async () => {
  await createMember(t, s, 'default', 'olga'); // will be in admins: may start jobs
  await createMember(t, s, 'default', 'rick'); // a member only: may read jobs, not start them
  await createUser(t, s, 'stan'); // in no organization
  await createMember(t, s, 'default', 'wanda');
  const admins = await s.pivotal.request('PUT', `${ORG}/groups/admins`, { actors: { users: ['admin', 'olga'] } });
  expectStatus(t, admins, 200);
  for (const name of ['web1', 'web2', 'db1']) {
    expectStatus(t, await s.pivotal.request('POST', `${ORG}/nodes`, { name, json_class: 'Chef::Node' }), 201);
  }
});

const visitor = () => new UiVisitor(s.url);

t.test('a page asked for without signing in leads to the sign-in form', async (t) => {
  const v = visitor();
  const page = await v.get('/ui/orgs/default/nodes');
  t.equal(page.status, 303);
  t.equal(page.location, '/ui/sign-in?next=%2Fui%2Forgs%2Fdefault%2Fnodes');
  const form = await v.get(page.location);
  t.equal(form.status, 200);
  t.match(form.html, /<form method="post" action="\/ui\/sign-in">/);
  t.match(form.html, /name="_csrf" value="[A-Za-z0-9_-]{43}"/, 'the form carries a token');
  t.equal((await v.get('/ui/orgs/default/jobs/x/events', 'text/event-stream')).status, 401, 'a feed says 401');
});

t.test('the right password signs in with an HttpOnly, SameSite=Strict session cookie', async (t) => {
  const v = visitor();
  await v.get('/ui/sign-in?next=%2Fui%2Forgs%2Fdefault%2Fjobs');
  const signedIn = await v.post('/ui/sign-in', { username: 'olga', password: PASSWORD, next: '/ui/orgs/default/jobs' });
  t.equal(signedIn.status, 303);
  t.equal(signedIn.location, '/ui/orgs/default/jobs', 'back to the page asked for');
  const cookie = setCookieLine(signedIn, 'infra_session');
  t.match(cookie, /; Max-Age=3600/);
  t.match(cookie, /; Path=\/ui/);
  t.match(cookie, /; HttpOnly/);
  t.match(cookie, /; SameSite=Strict/);
  const orgs = await v.get('/ui/orgs');
  t.equal(orgs.status, 200);
  t.match(orgs.html, /href="\/ui\/orgs\/default\/nodes">default</);
  t.match(orgs.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  t.equal(orgs.headers.get('cache-control'), 'no-store');
});

t.test('a wrong password or an unknown name gets the same message and no session', async (t) => {
  for (const [username, password] of [
    ['rick', 'wrong-password'],
    ['nobody', PASSWORD],
  ] as const) {
    const v = visitor();
    const page = await v.signIn(username, password);
    t.equal(page.status, 401, username);
    t.match(page.html, /Wrong user name or password\./);
    t.equal(v.cookie('infra_session'), undefined);
  }
});

t.test('a sign-in form without its token is refused', async (t) => {
  const v = visitor();
  await v.get('/ui/sign-in');
  const page = await v.post('/ui/sign-in', { username: 'olga', password: PASSWORD }, null);
  t.equal(page.status, 403);
  t.equal(v.cookie('infra_session'), undefined);
});

t.test('failed sign-ins for one name make the next attempts wait, even with the right password', async (t) => {
  for (let i = 1; i <= 5; i++) t.equal((await visitor().signIn('wanda', `guess-${i}`)).status, 401, `guess ${i}`);
  const blocked = await visitor().signIn('wanda', PASSWORD);
  t.equal(blocked.status, 429);
  t.match(blocked.html, /Too many failed sign-ins\. Wait \d+ seconds? and try again\./);
  t.equal((await visitor().signIn('olga', PASSWORD)).status, 303, 'other names are not held back');
});

t.test('failed sign-ins from one address hold back that address only', async (t) => {
  const from = (address: string) => new UiVisitor(s.url, address);
  // Twenty failures (the address rule), each for a new name so that no name's own rule is reached.
  for (let i = 1; i <= 20; i++) await from('127.0.0.2').signIn(`nobody-${i}`, 'guess');
  t.equal((await from('127.0.0.2').signIn('rick', PASSWORD)).status, 429, 'the guessing address waits');
  t.equal((await from('127.0.0.3').signIn('rick', PASSWORD)).status, 303, 'another address signs in at once');
});

t.test('the node grid shows every node, and a search narrows it', async (t) => {
  const v = visitor();
  await v.signIn('rick', PASSWORD);
  const all = await v.get('/ui/orgs/default/nodes');
  t.equal(all.status, 200);
  for (const name of ['web1', 'web2', 'db1']) t.match(all.html, `data-node="${name}"`);
  t.match(all.html, /never heard/, 'nodes without a client have no heartbeat yet');
  t.match(all.html, /data-status="down"/);
  const web = await v.get('/ui/orgs/default/nodes?q=name%3Aweb*');
  t.match(web.html, 'data-node="web1"');
  t.match(web.html, 'data-node="web2"');
  t.notMatch(web.html, 'data-node="db1"');
  const bad = await v.get('/ui/orgs/default/nodes?q=name%3A%28');
  t.equal(bad.status, 400, 'a broken query is answered as the search API answers it');
});

t.test('a user of another organization is refused its pages', async (t) => {
  const v = visitor();
  await v.signIn('stan', PASSWORD);
  t.match((await v.get('/ui/orgs')).html, /You do not belong to any organization yet/);
  const page = await v.get('/ui/orgs/default/nodes');
  t.equal(page.status, 403);
  t.match(page.html, /stan(&#39;|') is not a member of organization/);
  t.equal((await v.get('/ui/orgs/nowhere/jobs')).status, 404);
});

t.test('a user with push write access starts a job through the form', async (t) => {
  const v = visitor();
  await v.signIn('olga', PASSWORD);
  const jobs = await v.get('/ui/orgs/default/jobs');
  t.match(jobs.html, /data-testid="start-job"/, 'the start form is shown');
  const started = await v.post('/ui/orgs/default/jobs', { command: 'chef-client', search: 'name:web*', quorum: '1' });
  t.equal(started.status, 303);
  const id = /^\/ui\/orgs\/default\/jobs\/([0-9a-f]{32})$/.exec(started.location)?.[1] ?? '';
  t.not(id, '', started.location);
  const job = await v.get(started.location);
  t.equal(job.status, 200);
  t.match(job.html, /<script src="\/ui\/assets\/job-live\.js" defer/);
  t.match(job.html, 'data-node="web1"');
  t.match(job.html, 'data-node="web2"');
  t.notMatch(job.html, 'data-node="db1"');
  const listed = jobListSchema.parse((await s.admin.request('GET', `${ORG}/pushy/jobs`)).body);
  t.same(
    listed.map((j) => j.id),
    [id],
    'the API lists the job',
  );
  const invalid = await v.post('/ui/orgs/default/jobs', { command: 'chef-client', nodes: 'web1', quorum: 'most' });
  t.equal(invalid.status, 400);
  t.match(invalid.html, /The quorum is a number of nodes/);
  t.match(invalid.html, /value="most"/, 'the form keeps what was typed');
});

t.test("a job's feed is open to its readers and closed to others", async (t) => {
  const [summary] = jobListSchema.parse((await s.admin.request('GET', `${ORG}/pushy/jobs`)).body);
  const id = summary?.id ?? '';
  await waitForEnd(s.admin, id);
  const reader = visitor();
  await reader.signIn('rick', PASSWORD);
  const feed = await reader.get(`/ui/orgs/default/jobs/${id}/events`, 'text/event-stream');
  t.equal(feed.status, 200);
  t.equal(feed.headers.get('content-type'), 'text/event-stream');
  t.match(feed.html, /^event: (start|summary)\nid: job-([a-z0-9]+-)?1\ndata: \{/, 'the feed from its first event');
  t.match(feed.html, /"status":"quorum_failed"/, 'to the end of the job');
  const outsider = visitor();
  await outsider.signIn('stan', PASSWORD);
  t.equal((await outsider.get(`/ui/orgs/default/jobs/${id}/events`, 'text/event-stream')).status, 403);
  t.equal((await reader.get(`/ui/orgs/default/jobs/${'0'.repeat(32)}/events`, 'text/event-stream')).status, 404);
});

t.test('a form posted without its CSRF token is refused with 403', async (t) => {
  const v = visitor();
  await v.signIn('olga', PASSWORD);
  await v.get('/ui/orgs/default/jobs');
  const page = await v.post('/ui/orgs/default/jobs', { command: 'chef-client', nodes: 'web1' }, null);
  t.equal(page.status, 403);
  t.match(page.html, /CSRF token/);
  const wrong = await v.post('/ui/orgs/default/jobs', { command: 'chef-client', nodes: 'web1', _csrf: 'x'.repeat(43) });
  t.equal(wrong.status, 403);
  t.equal(jobListSchema.parse((await s.admin.request('GET', `${ORG}/pushy/jobs`)).body).length, 1, 'no job started');
});

t.test('a member without write access sees no start form and is refused when posting anyway', async (t) => {
  const v = visitor();
  await v.signIn('rick', PASSWORD);
  const jobs = await v.get('/ui/orgs/default/jobs');
  t.equal(jobs.status, 200);
  t.match(jobs.html, /data-testid="job-list"/, 'the job list is shown');
  t.notMatch(jobs.html, /data-testid="start-job"/);
  const id = /href="\/ui\/orgs\/default\/jobs\/([0-9a-f]{32})"/.exec(jobs.html)?.[1] ?? '';
  t.notMatch((await v.get(`/ui/orgs/default/jobs/${id}`)).html, /Abort job/, 'no abort button');
  const page = await v.post('/ui/orgs/default/jobs', { command: 'chef-client', nodes: 'web1' });
  t.equal(page.status, 403);
  t.match(page.html, /missing create permission/);
  t.equal((await v.post(`/ui/orgs/default/jobs/${id}/abort`, {})).status, 403, 'abort is refused too');
  t.equal(jobListSchema.parse((await s.admin.request('GET', `${ORG}/pushy/jobs`)).body).length, 1, 'no job started');
});

t.test('signing out ends the session', async (t) => {
  const v = visitor();
  await v.signIn('olga', PASSWORD);
  const session = v.cookie('infra_session') ?? '';
  const orgs = await v.get('/ui/orgs');
  const out = await v.post('/ui/sign-out', {});
  t.equal(out.status, 303);
  t.equal(out.location, '/ui/sign-in?signed_out');
  t.equal(v.cookie('infra_session'), undefined, 'the cookie is cleared');
  t.match(orgs.html, /Sign out/);
  const stale = await fetch(new URL('/ui/orgs', s.url), {
    headers: { Cookie: `infra_session=${session}`, Accept: 'text/html' },
    redirect: 'manual',
  });
  t.equal(stale.status, 303, 'the old cookie opens nothing');
});

t.test('the API is unchanged: /ui has its own sign-in, the rest still needs signed headers', async (t) => {
  const res = await fetch(new URL(`${ORG}/nodes`, s.url));
  t.equal(res.status, 400, 'an unsigned API request is refused as before');
  t.match(await res.json(), { error: [/X-Ops-/] });
  t.equal((await s.admin.request('GET', `${ORG}/pushy/node_states`)).status, 200);
  t.equal((await fetch(new URL('/ui/no/such/page', s.url))).status, 404);
});
