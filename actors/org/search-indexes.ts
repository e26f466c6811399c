// An organization's search indexes over nodes, roles, environments and data bag items: derived from the
// documents, built when the organization loads and kept current on every applied write, so a query never
// scans every document for an exact term.
import { flattenDocument } from '../../src/search/flatten.js';
import { SearchIndex } from '../../src/search/search-index.js';
import type { OrgCollection } from '../../src/store/collections.js';
import type { ObjectDoc } from '../shared/documents.js';

export interface OrgSearch {
  node: SearchIndex;
  role: SearchIndex;
  environment: SearchIndex;
  /** One index per data bag, named after it. */
  bags: Map<string, SearchIndex>;
}

export function emptySearch(): OrgSearch {
  return { node: new SearchIndex(), role: new SearchIndex(), environment: new SearchIndex(), bags: new Map() };
}

/** The index of a data bag's items, made on first use. */
export function bagIndex(search: OrgSearch, bag: string): SearchIndex {
  let index = search.bags.get(bag);
  if (!index) {
    index = new SearchIndex();
    search.bags.set(bag, index);
  }
  return index;
}

/** Keeps the indexes current with one document written (`doc`) or removed (null). Items are keyed `BAG/ITEM`. */
export function indexDoc(search: OrgSearch, coll: OrgCollection, id: string, doc: ObjectDoc | null): void {
  switch (coll) {
    case 'nodes':
      if (doc === null) search.node.remove(id);
      else search.node.put(id, flattenDocument('node', doc.body));
      break;
    case 'roles':
      if (doc === null) search.role.remove(id);
      else search.role.put(id, flattenDocument('role', doc.body));
      break;
    case 'environments':
      if (doc === null) search.environment.remove(id);
      else search.environment.put(id, flattenDocument('environment', doc.body));
      break;
    case 'data':
      if (doc === null) search.bags.delete(id);
      break;
    case 'items': {
      const bag = id.slice(0, id.indexOf('/'));
      if (doc === null) search.bags.get(bag)?.remove(id);
      else bagIndex(search, bag).put(id, flattenDocument('data', doc.body));
      break;
    }
    default:
      break; // not searchable
  }
}
