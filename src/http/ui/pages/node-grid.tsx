// An organization's nodes as the dashboard shows them: the search form, the counts up, down and available, and a
// card for each node with its status, availability, last heartbeat and since when it has had its status.
import type { FC } from 'hono/jsx';
import type { NodeStateBody } from '../../../api/push-jobs.js';
import { orgPath, Status, When } from './layout.js';

export type NodeRow = NodeStateBody & { last_heartbeat: string | null };

export interface NodeGridProps {
  org: string;
  /** The search query the rows answer, or '' for every node. */
  query: string;
  rows: NodeRow[];
  now: number;
}

export const NodeGrid: FC<NodeGridProps> = ({ org, query, rows, now }) => {
  const up = rows.filter((r) => r.status === 'up').length;
  const available = rows.filter((r) => r.availability === 'available').length;
  return (
    <>
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
    </>
  );
};
