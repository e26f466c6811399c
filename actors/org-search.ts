// Search over an organization's nodes, roles, environments and data bag items (issue: search). The
// indexes are derived from the documents, built when the organization loads and kept current on every
// write; a query never scans every document for an exact term.
import { flattenDocument } from '../src/search/flatten.js';
import { parseQuery, SearchSyntaxError } from '../src/search/query.js';
import { SearchIndex } from '../src/search/search-index.js';
import { accessFor, orgUri } from './org-access.js';
import type { OrgState, OrgWrite, Outcome } from './org-state.js';
import { fail, forbidden, ok, type RequestContext } from './reply.js';

export interface OrgSearch {
  node: SearchIndex;
  role: SearchIndex;
  environment: SearchIndex;
  /** One index per data bag, named after it. */
  bags: Map<string, SearchIndex>;
}

export type SearchOp =
  | { type: 'list_indexes' }
  | { type: 'search'; index: string; q: string; start: number; rows: number };

export function emptySearch(): OrgSearch {
  return { node: new SearchIndex(), role: new SearchIndex(), environment: new SearchIndex(), bags: new Map() };
}

export function buildSearch(state: OrgState): void {
  for (const [name, doc] of state.nodes) state.search.node.put(name, flattenDocument('node', doc.body));
  for (const [name, doc] of state.roles) state.search.role.put(name, flattenDocument('role', doc.body));
  for (const [name, doc] of state.environments) state.search.environment.put(name, flattenDocument('environment', doc.body));
  for (const [key, doc] of state.items) bagIndex(state, key.slice(0, key.indexOf('/'))).put(key, flattenDocument('data', doc.body));
}

/** Keeps the indexes current with one write, after it is persisted. */
export function indexWrite(state: OrgState, w: OrgWrite): void {
  const s = state.search;
  switch (w.coll) {
    case 'nodes':
      if (w.doc === null) s.node.remove(w.id);
      else s.node.put(w.id, flattenDocument('node', w.doc.body));
      break;
    case 'roles':
      if (w.doc === null) s.role.remove(w.id);
      else s.role.put(w.id, flattenDocument('role', w.doc.body));
      break;
    case 'environments':
      if (w.doc === null) s.environment.remove(w.id);
      else s.environment.put(w.id, flattenDocument('environment', w.doc.body));
      break;
    case 'data':
      if (w.doc === null) s.bags.delete(w.id);
      break;
    case 'items': {
      const bag = w.id.slice(0, w.id.indexOf('/'));
      if (w.doc === null) s.bags.get(bag)?.remove(w.id);
      else bagIndex(state, bag).put(w.id, flattenDocument('data', w.doc.body));
      break;
    }
    default:
      break;
  }
}

export function handleSearchOp(state: OrgState, ctx: RequestContext, op: SearchOp): Outcome {
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
    const found = state.search[op.index].search(query, { ...page, filter: (id) => access.can(docs.get(id)?.acl, 'read') });
    return { reply: ok({ total: found.total, start: op.start, rows: found.ids.map((id) => docs.get(id)?.body) }) };
  }
  const bag = state.data.get(op.index);
  if (!bag) return { reply: fail(404, `I don't know how to search for ${op.index} data objects.`) };
  if (!access.can(bag.acl, 'read')) return { reply: forbidden('read') };
  const found = bagIndex(state, op.index).search(query, page);
  return { reply: ok({ total: found.total, start: op.start, rows: found.ids.map((id) => state.items.get(id)?.body) }) };
}

function bagIndex(state: OrgState, bag: string): SearchIndex {
  let index = state.search.bags.get(bag);
  if (!index) {
    index = new SearchIndex();
    state.search.bags.set(bag, index);
  }
  return index;
}
