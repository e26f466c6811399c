// One job as the dashboard shows it: its facts, a rollout's waves, a count of nodes per status and the per-node table. The job page
// holds it, and its live script fetches it again when the job itself moves; rows carry data-node and their
// cells data-status so the script can update them from the job feed.
import type { FC } from 'hono/jsx';
import type { JobBody } from '../../../api/push-jobs.js';
import { isFinished, NODE_JOB_STATUSES, type NodeJobStatus } from '../../../push/job-states.js';
import { parseHttpDate } from '../../../lib/dates.js';
import { CsrfField, orgPath, shortDate, Status, When } from './layout.js';
import { WaveTable } from './wave-table.js';

export interface JobPanelProps {
  org: string;
  job: JobBody;
  now: number;
  /** Whether the user may abort jobs here (push write access, as the organization answered). */
  canAbort: boolean;
  csrf: string;
}

export const JobPanel: FC<JobPanelProps> = ({ org, job, now, canAbort, csrf }) => {
  const rows = NODE_JOB_STATUSES.flatMap((status) => (job.nodes[status] ?? []).map((node) => ({ node, status })));
  rows.sort((a, b) => a.node.localeCompare(b.node));
  const finished = isFinished(job.status);
  return (
    <div id="job-panel" data-job-status={job.status}>
      <div class="panel">
        <dl class="facts">
          <dt>Command</dt>
          <dd class="mono">{job.command}</dd>
          <dt>Status</dt>
          <dd id="job-status">
            <Status status={job.status} />
          </dd>
          <dt>Quorum</dt>
          <dd>
            {job.quorum} of {rows.length} nodes
          </dd>
          <dt>Run timeout</dt>
          <dd>{job.run_timeout} s</dd>
          <dt>Started</dt>
          <dd>
            <When at={job.created_at} now={now} />
          </dd>
          <dt>Updated</dt>
          <dd>
            <When at={job.updated_at} now={now} />
          </dd>
        </dl>
        {canAbort && !finished ? (
          <form class="actions" method="post" action={orgPath(org, 'jobs', job.id, 'abort')}>
            <CsrfField token={csrf} />
            <button class="danger" type="submit">
              Abort job
            </button>
          </form>
        ) : null}
      </div>
      {job.rollout === undefined ? null : <WaveTable rollout={job.rollout} />}
      <div class="counts" id="node-counts">
        <NodeCounts rows={rows} />
      </div>
      <table id="job-nodes">
        <thead>
          <tr>
            <th>Node</th>
            <th>Status</th>
            <th>Since</th>
            {job.capture_output ? <th>Output</th> : null}
          </tr>
        </thead>
        <tbody>
          {rows.map(({ node, status }) => {
            const at = parseHttpDate(job.node_updated_at[node] ?? '');
            return (
              <tr data-node={node}>
                <td>{node}</td>
                <td class="node-status" data-status={status}>
                  <Status status={status} />
                </td>
                <td class="node-since">{at === undefined ? '' : shortDate(at)}</td>
                {job.capture_output ? (
                  <td>
                    <a href={orgPath(org, 'jobs', job.id, 'output', node, 'stdout')}>stdout</a> ·{' '}
                    <a href={orgPath(org, 'jobs', job.id, 'output', node, 'stderr')}>stderr</a>
                  </td>
                ) : null}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
};

/** `3 succeeded`, `1 failed`...: one chip per status that has nodes, in lifecycle order. */
const NodeCounts: FC<{ rows: { status: NodeJobStatus }[] }> = ({ rows }) => (
  <>
    {NODE_JOB_STATUSES.map((status) => {
      const n = rows.filter((r) => r.status === status).length;
      return n === 0 ? null : (
        <span class={`st st-${status}`} data-count={status}>
          {n} {status.replaceAll('_', ' ')}
        </span>
      );
    })}
  </>
);
