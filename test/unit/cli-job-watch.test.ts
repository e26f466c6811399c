// What `cli job watch` makes of a job's feed events: the live view behind its progress line, and the --verbose lines.
import t from 'tap';
import type { JobBody } from '../../src/api/push-jobs.js';
import { eventLine, JobView } from '../../src/cli/job-watch.js';
import { progressText } from '../../src/cli/progress.js';

const running = { status: 'running', nodes: { running: ['a'], succeeded: ['b'], nacked: ['c'] } } as unknown as JobBody;
const ev = (event: string, data: Record<string, unknown> = {}) => ({
  event,
  data: { timestamp: '2026-11-24 10:35:19.123000Z', ...data },
});

t.test('the view replays the job from its start', async (t) => {
  const view = new JobView(running);
  t.equal(progressText(view.body), 'voting: 3 voting, 0 ready, 0 running, 0 of 3 finished', 'every node starts new');
  view.apply(ev('start'));
  view.apply(ev('quorum_vote', { node: 'a', status: 'success' }));
  view.apply(ev('quorum_vote', { node: 'b', status: 'success' }));
  view.apply(ev('quorum_vote', { node: 'c', status: 'failure' }));
  view.apply(ev('quorum_succeeded'));
  t.equal(progressText(view.body), 'running: 0 voting, 2 ready, 0 running, 1 of 3 finished (1 nacked)');
  view.apply(ev('run_start', { node: 'a' }));
  view.apply(ev('run_start', { node: 'b' }));
  view.apply(ev('run_complete', { node: 'b', status: 'success' }));
  view.apply(ev('quorum_vote', { node: 'b', status: 'down' }));
  t.equal(
    progressText(view.body),
    'running: 0 voting, 0 ready, 1 running, 2 of 3 finished (1 succeeded, 1 nacked)',
    'a finished node going down stays finished',
  );
  view.apply(ev('run_complete', { node: 'a', status: 'run_nacked_while_running' }));
  view.apply(ev('quorum_vote', { node: 'zz', status: 'success' }));
  view.apply(ev('job_complete', { status: 'complete' }));
  t.equal(
    progressText(view.body),
    'complete: 0 voting, 0 ready, 0 running, 3 of 3 finished (1 succeeded, 1 crashed, 1 nacked)',
    'a node not in the job is ignored',
  );
});

t.test('--verbose prints node events with their time, and leaves job-level events to the progress line', async (t) => {
  t.equal(eventLine(ev('quorum_vote', { node: 'web1', status: 'success' })), '10:35:19 web1 quorum_vote success');
  t.equal(eventLine(ev('run_start', { node: 'web1' })), '10:35:19 web1 run_start');
  t.equal(eventLine(ev('quorum_succeeded')), undefined);
  t.equal(eventLine(ev('job_complete', { status: 'complete' })), undefined);
});
