import t from 'tap';
import { startTestServer } from '../support/server.js';
import { startTestNode, poll } from '../support/test-node.js';

t.test('smoke', async (t) => {
  const s = await startTestServer(t, 'file', { heartbeat_interval: 100, offline_threshold: 3, online_threshold: 2, voting_timeout: 2 });
  const a = await startTestNode(s, 'alpha');
  t.teardown(() => a.stop());
  const res = await s.admin.request('POST', '/organizations/default/pushy/jobs', { command: 'chef-client', nodes: ['alpha'] });
  console.log(res.status, res.body);
  const id = (res.body as any).id;
  const job = await poll('complete', async () => {
    const r = await s.admin.request('GET', `/organizations/default/pushy/jobs/${id}`);
    return (r.body as any).status === 'complete' ? r.body : undefined;
  });
  console.log(job, a.problems, a.sent.map(r=>r.body.type).filter(x=>x!=='heartbeat'));
  console.log((await s.admin.request('GET', '/_status')).body);
});
t.teardown(() => { setTimeout(() => { const h = (process as any)._getActiveHandles(); console.log('handles', h.map((x: any) => x.constructor.name + (x._idleTimeout ? ':' + x._idleTimeout : ''))); }, 1500).unref(); });
