// The job list pages newest first, and finished jobs past job_retention_days leave the list, the API and the
// store, output included, in the background.
import t from 'tap';
import { until } from '../support/deadline.js';
import { startJob, waitForEnd } from '../support/push-api.js';
import { startTestServer } from '../support/server.js';
import { startTestNode, succeed } from '../support/test-node.js';

const JOBS = '/organizations/default/pushy/jobs';
const FAST = { heartbeat_interval: 100, offline_threshold: 8, online_threshold: 2, voting_timeout: 5 };

t.test('GET /pushy/jobs pages newest first with offset and limit', async (t) => {
  const s = await startTestServer(t, 'file', FAST);
  // Jobs on nodes never heard end quorum_failed at once: five finished jobs, created one after another.
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await startJob(s.admin, { command: 'chef-client', nodes: [`ghost-${i}`] }));
  const newestFirst = [...ids].reverse();
  const list = async (query: string) => {
    const res = await s.admin.request('GET', `${JOBS}${query}`);
    return { status: res.status, ids: Array.isArray(res.body) ? res.body.map((j: { id: string }) => j.id) : res.body };
  };
  t.same(await list(''), { status: 200, ids: newestFirst }, 'without paging, every job');
  t.same(await list('?limit=2'), { status: 200, ids: newestFirst.slice(0, 2) });
  t.same(await list('?offset=2&limit=2'), { status: 200, ids: newestFirst.slice(2, 4) });
  t.same(await list('?offset=4'), { status: 200, ids: newestFirst.slice(4) });
  t.same(await list('?offset=9'), { status: 200, ids: [] }, 'past the end, an empty page');
  t.same(await list('?limit=0'), {
    status: 400,
    ids: { error: ["Query parameter 'limit' must be a whole number above 0"] },
  });
  t.same(await list('?offset=-1'), {
    status: 400,
    ids: { error: ["Query parameter 'offset' must be a whole number"] },
  });
  const restarted = await s.restart();
  const again = await restarted.admin.request('GET', `${JOBS}?limit=3`);
  t.same(
    (again.body as Array<{ id: string }>).map((j) => j.id),
    newestFirst.slice(0, 3),
    'a restart keeps the order',
  );
});

t.test('finished jobs past job_retention_days are purged with their output', async (t) => {
  const retention = 1.5; // seconds
  const s = await startTestServer(t, 'file', { ...FAST, job_retention_days: retention / 86_400 });
  const n = await startTestNode(s, 'kept-1', { run: succeed({ stdout: 'hello\n' }) });
  t.teardown(() => n.stop());
  const id = await startJob(s.admin, { command: 'chef-client', nodes: ['kept-1'], capture_output: true });
  t.equal((await waitForEnd(s.admin, id)).status, 'complete');
  const output = `${JOBS}/${id}/output/kept-1/stdout`;
  t.equal((await s.admin.request('GET', output)).status, 200, 'the output is there at first');

  await until(
    'the job to be purged',
    async () => ((await s.admin.request('GET', `${JOBS}/${id}`)).status === 404 ? true : undefined),
    10_000,
  );
  const ids = ((await s.admin.request('GET', JOBS)).body as Array<{ id: string }>).map((j) => j.id);
  t.notOk(ids.includes(id), 'the job left the list');
  t.equal((await s.admin.request('GET', output)).status, 404, 'and its output is gone');
  const restarted = await s.restart();
  t.equal((await restarted.admin.request('GET', `${JOBS}/${id}`)).status, 404, 'a restart does not bring it back');
});
