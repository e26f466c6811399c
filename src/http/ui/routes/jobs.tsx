// An organization's job list, newest first, with the start-job form for users the organization lets start jobs.
// Starting sends the API's start_job op: the organization, not this page, decides who may.
import type { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import { jobCreatedSchema, jobListSchema, type JobSummaryBody } from '../../../api/push-jobs.js';
import { viewerOf } from '../guard.js';
import { documentOf, Layout, orgPath, shortHttpDate, Status, type Notice } from '../pages/layout.js';
import { StartJobForm, type StartJobValues } from '../pages/start-job-form.js';
import { answer, errorStatus, fromOrg, orgReply, replyMessage } from '../ui-ask.js';
import { PageError, type UiCtx, type UiDeps, type UiEnv } from '../ui-env.js';
import { jobRequestFrom, pushAccessSchema, startFormSchema } from './job-request.js';

const PAGE_SIZE = 50;
const offsetSchema = z.coerce.number().int().nonnegative().max(1e9);

export function jobRoutes(app: Hono<UiEnv>, deps: UiDeps): void {
  app.get('/orgs/:org/jobs', async (c) => {
    const offset = offsetSchema.safeParse(c.req.query('offset') ?? 0);
    if (!offset.success) throw new PageError(400, 'The page offset must be a whole number.');
    return jobsPage(c, deps, { offset: offset.data, status: 200 });
  });

  app.post('/orgs/:org/jobs', async (c) => {
    const org = c.req.param('org');
    const form = startFormSchema.safeParse(await c.req.parseBody());
    if (!form.success) throw new PageError(400, 'The start-job form was incomplete.');
    const values = form.data;
    const built = await jobRequestFrom(c, deps, org, values);
    if (!built.ok) return jobsPage(c, deps, { offset: 0, status: 400, values, notice: built.error });
    const reply = await orgReply(c, deps, org, { type: 'start_job', job: built.job });
    if (reply.status !== 201) {
      const notice = `The job was not started. ${replyMessage(reply)}`;
      return jobsPage(c, deps, { offset: 0, status: errorStatus(reply.status), values, notice });
    }
    return c.redirect(orgPath(org, 'jobs', answer(reply, jobCreatedSchema).id), 303);
  });
}

async function jobsPage(
  c: UiCtx,
  deps: UiDeps,
  p: { offset: number; status: ContentfulStatusCode; values?: StartJobValues; notice?: string },
): Promise<Response> {
  const org = c.req.param('org') ?? '';
  // One more than a page, to know whether an older page exists.
  const jobs = await fromOrg(
    c,
    deps,
    org,
    { type: 'list_jobs', offset: p.offset, limit: PAGE_SIZE + 1 },
    jobListSchema,
  );
  const access = await fromOrg(c, deps, org, { type: 'get_push_access' }, pushAccessSchema);
  const viewer = viewerOf(c);
  const notice: Notice | undefined = p.notice === undefined ? undefined : { kind: 'error', text: p.notice };
  const page = (
    <Layout title={`${org}: jobs`} viewer={viewer} org={org} here="jobs" {...(notice ? { notice } : {})}>
      <h1>Jobs of {org}</h1>
      {access.write ? (
        <section class="panel">
          <h2 class="first">Start a job</h2>
          <StartJobForm org={org} csrf={viewer.csrf} values={p.values} />
        </section>
      ) : null}
      {jobs.length === 0 ? <p class="muted">No jobs yet.</p> : <JobTable org={org} jobs={jobs.slice(0, PAGE_SIZE)} />}
      <div class="pager">
        {p.offset > 0 ? (
          <a href={`${orgPath(org, 'jobs')}?offset=${Math.max(0, p.offset - PAGE_SIZE)}`}>← newer</a>
        ) : null}
        {jobs.length > PAGE_SIZE ? (
          <a href={`${orgPath(org, 'jobs')}?offset=${p.offset + PAGE_SIZE}`}>older →</a>
        ) : null}
      </div>
    </Layout>
  );
  return c.html(await documentOf(page), p.status);
}

function JobTable({ org, jobs }: { org: string; jobs: JobSummaryBody[] }) {
  return (
    <table data-testid="job-list">
      <thead>
        <tr>
          <th>Job</th>
          <th>Command</th>
          <th>Status</th>
          <th>Started</th>
          <th>Updated</th>
        </tr>
      </thead>
      <tbody>
        {jobs.map((j) => (
          <tr>
            <td class="mono">
              <a href={orgPath(org, 'jobs', j.id)}>{j.id.slice(0, 12)}</a>
            </td>
            <td class="mono">{j.command}</td>
            <td>
              <Status status={j.status} />
            </td>
            <td>{shortHttpDate(j.created_at)}</td>
            <td>{shortHttpDate(j.updated_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
