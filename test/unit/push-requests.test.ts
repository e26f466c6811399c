// Which push requests an organization may hand on while its writes are being stored: every one but a new job and
// an abort, the two that change anything.
import t from 'tap';
import type { JobState } from '../../actors/push/job-model.js';
import { isPushRead, type PushRequest } from '../../actors/push/push-requests.js';

const job = {} as JobState;

t.test('starting a job is not a read', async (t) => {
  t.equal(isPushRead({ type: 'start_job', job, reply: { status: 201, body: {} } }), false);
});

t.test('aborting a job is not a read', async (t) => {
  t.equal(isPushRead({ type: 'job', id: 'j1', request: 'abort' }), false);
});

t.test('every other request is a read', async (t) => {
  const reads: PushRequest[] = [
    { type: 'job', id: 'j1', request: 'get' },
    { type: 'list_jobs', offset: 0, limit: 10 },
    { type: 'job_output', id: 'j1', node: 'n1', channel: 'stdout' },
    { type: 'node_states', nodes: ['n1'], since: 0, heartbeats: true },
    { type: 'node_state', node: 'n1', known: true, since: 0 },
    { type: 'node_config', node: 'n1', ccpk: 'k' },
  ];
  for (const r of reads) t.equal(isPushRead(r), true, `${r.type}${r.type === 'job' ? ` ${r.request}` : ''}`);
});
