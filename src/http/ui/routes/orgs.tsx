// The organizations the signed-in user belongs to, and each organization's node grid (pages/node-grid.tsx): every
// node with its status, availability and last heartbeat, narrowed by a search query when one is given.
import type { Hono } from 'hono';
import { z } from 'zod';
import { httpDateSchema, nodeStateSchema } from '../../../api/push-jobs.js';
import { viewerOf } from '../guard.js';
import { documentOf, Layout, orgPath } from '../pages/layout.js';
import { NodeGrid, type NodeRow } from '../pages/node-grid.js';
import { answer, fromOrg, usersReply } from '../ui-ask.js';
import { PageError, type UiCtx, type UiDeps, type UiEnv } from '../ui-env.js';

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
        {orgs.length === 0 ? <p class="muted">You do not belong to any organization yet.</p> : <OrgTable orgs={orgs} />}
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
    const rows = await nodeRows(c, deps, org, query);
    const now = deps.now();
    const page = (
      <Layout title={`${org}: nodes`} viewer={viewerOf(c)} org={org} here="nodes">
        <h1>Nodes of {org}</h1>
        <NodeGrid org={org} query={query} rows={rows} now={now} />
      </Layout>
    );
    return c.html(await documentOf(page));
  });
}

/** Every node of `org` with its last heartbeat; with a query, only those its search finds. */
async function nodeRows(c: UiCtx, deps: UiDeps, org: string, query: string): Promise<NodeRow[]> {
  const rows = await fromOrg(c, deps, org, { type: 'list_node_states', heartbeats: true }, nodeRowsSchema);
  if (query === '') return rows;
  const found = await fromOrg(
    c,
    deps,
    org,
    { type: 'search', index: 'node', q: query, start: 0, rows: SEARCH_ROWS },
    nodeSearchSchema,
  );
  const names = new Set(found.rows.flatMap((r) => (r ? [r.name] : [])));
  return rows.filter((r) => names.has(r.node_name));
}

function OrgTable({ orgs }: { orgs: z.infer<typeof userOrgsSchema> }) {
  return (
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
  );
}
