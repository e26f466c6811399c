// One job's page: its panel (facts, counts, per-node table) kept current by the job feed, the panel alone for the
// page's script to fetch again, the abort button's target, and the captured output of a node.
import type { Hono } from 'hono';
import { z } from 'zod';
import { jobSchema, type JobBody } from '../../../api/push-jobs.js';
import { jobFeedResponse } from '../../feed-stream.js';
import { viewerOf } from '../guard.js';
import { JobPanel } from '../pages/job-panel.js';
import { documentOf, Layout, orgPath } from '../pages/layout.js';
import { JOB_SCRIPT_PATH } from '../job-script.js';
import { answer, fromOrg, orgReply } from '../ui-ask.js';
import { PageError, type UiCtx, type UiDeps, type UiEnv } from '../ui-env.js';
import { pushAccessSchema } from './job-request.js';

const channelSchema = z.enum(['stdout', 'stderr']);

export function jobPageRoutes(app: Hono<UiEnv>, deps: UiDeps): void {
  app.get('/orgs/:org/jobs/:id', async (c) => {
    const { org, id } = c.req.param();
    const panel = await panelOf(c, deps, org, id);
    const page = (
      <Layout title={`Job ${id.slice(0, 12)}`} viewer={viewerOf(c)} org={org} here="jobs" scripts={[JOB_SCRIPT_PATH]}>
        <h1>
          Job <span class="mono">{id}</span>{' '}
          <span
            id="live"
            class="live"
            data-events={orgPath(org, 'jobs', id, 'events')}
            data-panel={orgPath(org, 'jobs', id, 'panel')}
          ></span>
        </h1>
        {panel}
      </Layout>
    );
    return c.html(await documentOf(page));
  });

  app.get('/orgs/:org/jobs/:id/panel', async (c) => {
    const { org, id } = c.req.param();
    return c.html(await panelOf(c, deps, org, id));
  });

  // The job feed, allowed as GET .../jobs/ID is: the organization's answer to get_job is the summary it ends with
  // once the job's actor is gone.
  app.get('/orgs/:org/jobs/:id/events', async (c) => {
    const { org, id } = c.req.param();
    const summary = await jobOf(c, deps, org, id);
    const closed = deps.streams === undefined ? () => {} : deps.streams.enter(`user:${c.get('session').username}`);
    if (closed === undefined) throw new PageError(429, 'Too many event streams open (max_event_streams).');
    const socket = c.env?.incoming?.socket;
    const stalled = () => {
      deps.streams?.stalled();
      socket?.destroy();
    };
    return jobFeedResponse(deps.system.feeds, org, id, c.req.header('Last-Event-ID'), summary, { closed, stalled });
  });

  app.post('/orgs/:org/jobs/:id/abort', async (c) => {
    const { org, id } = c.req.param();
    answer(await orgReply(c, deps, org, { type: 'abort_job', id }), jobSchema);
    return c.redirect(orgPath(org, 'jobs', id), 303);
  });

  app.get('/orgs/:org/jobs/:id/output/:node/:channel', async (c) => {
    const { org, id, node } = c.req.param();
    const channel = channelSchema.safeParse(c.req.param('channel'));
    if (!channel.success) throw new PageError(404, 'Output is stdout or stderr.');
    const reply = await orgReply(c, deps, org, { type: 'get_job_output', id, node, channel: channel.data });
    const text = answer(reply, z.string());
    return c.text(text, 200, { 'Content-Type': 'text/plain; charset=utf-8' });
  });
}

/** The job as the organization answers it for this user, or an error page with its refusal. */
export async function jobOf(c: UiCtx, deps: UiDeps, org: string, id: string): Promise<JobBody> {
  return fromOrg(c, deps, org, { type: 'get_job', id }, jobSchema);
}

async function panelOf(c: UiCtx, deps: UiDeps, org: string, id: string) {
  const [job, access] = await Promise.all([
    jobOf(c, deps, org, id),
    fromOrg(c, deps, org, { type: 'get_push_access' }, pushAccessSchema),
  ]);
  return <JobPanel org={org} job={job} now={deps.now()} canAbort={access.write} csrf={viewerOf(c).csrf} />;
}
