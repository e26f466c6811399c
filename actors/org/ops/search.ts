// Search over an organization's nodes, roles, environments and data bag items: the query language, paging, and
// results filtered by the requester's read permission on each document.
import { parseQuery, SearchSyntaxError } from '../../../src/search/query.js';
import { accessFor, orgUri } from '../access.js';
import type { OrgState } from '../org-state.js';
import type { OrgOutcome } from '../outcome.js';
import { fail, forbidden, ok, type RequestContext } from '../../shared/reply.js';
import { bagIndex } from '../search-indexes.js';

export type SearchOp =
  { type: 'list_indexes' } | { type: 'search'; index: string; q: string; start: number; rows: number };

export function handleSearchOp(state: OrgState, ctx: RequestContext, op: SearchOp): OrgOutcome {
  const access = accessFor(state, ctx);
  if (op.type === 'list_indexes') {
    const base = `${orgUri(ctx, state)}/search`;
    const names = ['node', 'role', 'environment', ...[...state.data.keys()].sort()];
    return { reply: ok(Object.fromEntries(names.map((n) => [n, `${base}/${n}`]))) };
  }
  let query;
  try {
    query = parseQuery(op.q);
  } catch (e) {
    if (e instanceof SearchSyntaxError) return { reply: fail(400, `invalid search query: ${e.message}`) };
    throw e;
  }
  const page = { start: op.start, rows: op.rows };
  const kinds = { node: state.nodes, role: state.roles, environment: state.environments } as const;
  if (op.index === 'node' || op.index === 'role' || op.index === 'environment') {
    const docs = kinds[op.index];
    // Results are filtered by the requester's read permission on each document.
    const found = state.search[op.index].search(query, {
      ...page,
      filter: (id) => access.can(docs.get(id)?.acl, 'read'),
    });
    return { reply: ok({ total: found.total, start: op.start, rows: found.ids.map((id) => docs.get(id)?.body) }) };
  }
  const bag = state.data.get(op.index);
  if (!bag) return { reply: fail(404, `I don't know how to search for ${op.index} data objects.`) };
  if (!access.can(bag.acl, 'read')) return { reply: forbidden('read') };
  const found = bagIndex(state.search, op.index).search(query, page);
  return { reply: ok({ total: found.total, start: op.start, rows: found.ids.map((id) => state.items.get(id)?.body) }) };
}
