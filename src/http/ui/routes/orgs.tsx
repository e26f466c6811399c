// The organizations the signed-in user belongs to, and each organization's node grid: every node with its
// status, availability and last heartbeat, narrowed by a search query when one is given.
import type { Hono } from 'hono';
import { z } from 'zod';
import { httpDateSchema, nodeStateSchema } from '../../../api/push-jobs.js';
import { viewerOf } from '../guard.js';
import { documentOf, Layout, orgPath, Status, When } from '../pages/layout.js';
import { answer, fromOrg, usersReply } from '../ui-ask.js';
import { PageError, type UiDeps, type UiEnv } from '../ui-env.js';

const userOrgsSchema = z.array(
  z.object({ organization: z.object({ name: z.string(), full_name: z.string().optional() }) }),
);
const nodeRowsSchema = z.array(nodeStateSchema.extend({ last_heartbeat: httpDateSchema.nullable() }));
/** Search answers hold node documents; only their names matter here. */
const nodeSearchSchema = z.object({ total: z.number(), rows: z.array(z.object({ name: z.string() }).nullable()) });
const querySchema = z.string().max(10_000);
/** As many as the API's search answers in one page. */
const SEARCH_ROWS = 10_000;

export function orgRoutes(app: Hono<UiEnv>, deps: UiDeps): void {
  app.get('/orgs', async (c) => {
    const viewer = viewerOf(c);
    const orgs = answer(await usersReply(c, deps, { type: 'list_user_orgs', name: viewer.username }), userOrgsSchema);
    const page = (
      <Layout title="Organizations" viewer={viewer}>
        <h1>Organizations</h1>
        {orgs.length === 0 ? (
          <p class="muted">You do not belong to any organization yet.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Full name</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {orgs.map(({ organization: o }) => (
                <tr>
                  <td>
                    <a href={orgPath(o.name, 'nodes')}>{o.name}</a>
                  </td>
                  <td>{o.full_name ?? ''}</td>
                  <td>
                    <a href={orgPath(o.name, 'nodes')}>nodes</a> · <a href={orgPath(o.name, 'jobs')}>jobs</a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Layout>
    );
    return c.html(await documentOf(page));
  });

  app.get('/orgs/:org', (c) => c.redirect(orgPath(c.req.param('org'), 'nodes'), 303));

  app.get('/orgs/:org/nodes', async (c) => {
    const org = c.req.param('org');
    const q = querySchema.safeParse(c.req.query('q') ?? '');
    if (!q.success) throw new PageError(400, 'The search query is too long.');
    const query = q.data.trim();
    let rows = await fromOrg(c, deps, org, { type: 'list_node_states', heartbeats: true }, nodeRowsSchema);
    if (query !== '') {
      const found = await fromOrg(
        c,
        deps,
        org,
        { type: 'search', index: 'node', q: query, start: 0, rows: SEARCH_ROWS },
        nodeSearchSchema,
      );
      const names = new Set(found.rows.flatMap((r) => (r ? [r.name] : [])));
      rows = rows.filter((r) => names.has(r.node_name));
    }
    const now = deps.now();
    const up = rows.filter((r) => r.status === 'up').length;
    const available = rows.filter((r) => r.availability === 'available').length;
    const page = (
      <Layout title={`${org}: nodes`} viewer={viewerOf(c)} org={org} here="nodes">
        <h1>Nodes of {org}</h1>
        <form class="search" method="get" action={orgPath(org, 'nodes')}>
          <input
            type="search"
            name="q"
            value={query}
            placeholder="Search query, such as name:web* or role:db"
            aria-label="Search query"
          />
          <button type="submit">Search</button>
          {query !== '' ? <a href={orgPath(org, 'nodes')}>clear</a> : null}
        </form>
        <div class="counts">
          <span class="st st-new">{rows.length} nodes</span>
          <span class="st st-up">{up} up</span>
          <span class="st st-down">{rows.length - up} down</span>
          <span class="st st-available">{available} available</span>
        </div>
        {rows.length === 0 ? (
          <p class="muted">{query === '' ? 'No nodes yet.' : 'No node matches this search.'}</p>
        ) : (
          <div class="grid" data-testid="node-grid">
            {rows.map((r) => (
              <div class={`card ${r.status}`} data-node={r.node_name}>
                <div class="name">{r.node_name}</div>
                <div class="row">
                  <Status status={r.status} testid="node-status" />
                  <Status status={r.availability} testid="node-availability" />
                </div>
                <div class="muted">
                  last heartbeat: <When at={r.last_heartbeat} now={now} />
                </div>
                <div class="muted">
                  {r.status} since <When at={r.updated_at} now={now} />
                </div>
              </div>
            ))}
          </div>
        )}
      </Layout>
    );
    return c.html(await documentOf(page));
  });
}
