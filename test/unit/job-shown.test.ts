// How a running job is shown to GET: how long one rendering may answer, by the job's size, and that a rendering
// from names sorted once reads exactly as one that sorts them.
import t from 'tap';
import { newJob } from '../../actors/push/job-machine.js';
import { jobJson } from '../../src/api/job-view.js';
import { keptRenderingMs } from '../../actors/push/job-answers.js';

t.test(
  'a rendering is kept only for jobs of 1,000 nodes or more, longer as they grow, never past a second',
  async (t) => {
    t.same(
      [1, 999, 1000, 2000, 4000, 10_000, 20_000, 100_000].map(keptRenderingMs),
      [0, 0, 100, 100, 200, 500, 1000, 1000],
    );
  },
);

t.test('a job rendered with its names sorted once reads as one rendered by sorting them', async (t) => {
  const names = ['zeta', '10', 'alpha', '9', '__proto__', 'Beta'];
  const at = Date.UTC(2026, 10, 25, 12, 0, 0);
  const job = newJob({ id: 'j', command: 'c', run_timeout: 60, voting_timeout: 60, quorum: 6, nodes: names, at });
  const statuses = ['running', 'succeeded', 'ready'] as const;
  names.forEach((node, i) => {
    job.nodes[node] = statuses[i % 3] ?? 'running';
    job.node_updated_at[node] = at + i * 1000;
  });
  const sorted = Object.keys(job.nodes).sort();
  t.same(jobJson(job, sorted), jobJson(job));
  t.same(jobJson(job, sorted).nodes, {
    running: ['9', 'zeta'],
    succeeded: ['10', '__proto__'],
    ready: ['Beta', 'alpha'],
  });
});
