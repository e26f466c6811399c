// An organization's schedules (pages/schedule-table.tsx), and the targets of their pause and resume buttons. Both
// send the API's schedule ops, so the organization allows or refuses them as it does for the API.
import type { Hono } from 'hono';
import { scheduleListSchema, scheduleSchema } from '../../../api/schedules.js';
import { viewerOf } from '../guard.js';
import { documentOf, Layout, orgPath } from '../pages/layout.js';
import { ScheduleTable } from '../pages/schedule-table.js';
import { answer, fromOrg, orgReply } from '../ui-ask.js';
import type { UiDeps, UiEnv } from '../ui-env.js';
import { pushAccessSchema } from './job-request.js';

export function scheduleRoutes(app: Hono<UiEnv>, deps: UiDeps): void {
  app.get('/orgs/:org/schedules', async (c) => {
    const org = c.req.param('org');
    const [schedules, access] = await Promise.all([
      fromOrg(c, deps, org, { type: 'list_schedules' }, scheduleListSchema),
      fromOrg(c, deps, org, { type: 'get_push_access' }, pushAccessSchema),
    ]);
    const viewer = viewerOf(c);
    const page = (
      <Layout title={`${org}: schedules`} viewer={viewer} org={org} here="schedules">
        <h1>Schedules of {org}</h1>
        {schedules.length === 0 ? (
          <p class="muted">
            No schedules yet: the API and <span class="mono">cli schedule add</span> create them.
          </p>
        ) : (
          <ScheduleTable org={org} schedules={schedules} canChange={access.write} csrf={viewer.csrf} />
        )}
      </Layout>
    );
    return c.html(await documentOf(page));
  });

  for (const request of ['pause', 'resume'] as const)
    app.post(`/orgs/:org/schedules/:name/${request}`, async (c) => {
      const { org, name } = c.req.param();
      answer(await orgReply(c, deps, org, { type: 'schedule', name, request }), scheduleSchema);
      return c.redirect(orgPath(org, 'schedules'), 303);
    });
}
