// `cli node status` (spec 2.5, 4.4) and node search: names from the search endpoint, every page of them.
import { z } from 'zod';
import { nodeStateListSchema, type NodeStateBody } from '../api/push-jobs.js';
import type { ApiConnection } from './api-connection.js';
import type { Cli } from './cli-connection.js';
import { formatColumns } from './columns.js';
import { CommandError } from './terminal.js';

const searchPageSchema = z.object({
  total: z.number().int().nonnegative(),
  start: z.number().int().nonnegative(),
  rows: z.array(z.looseObject({ name: z.string() })),
});

/** Rows asked for per search request. */
export const SEARCH_PAGE_ROWS = 1000;

export type SearchPage = z.infer<typeof searchPageSchema>;

/** Walks the pages from `start` 0 until `total` rows came; the names are deduplicated, in the server's order. */
export async function collectNames(fetchPage: (start: number) => Promise<SearchPage>): Promise<string[]> {
  const names = new Set<string>();
  for (let start = 0; ;) {
    const page = await fetchPage(start);
    for (const row of page.rows) names.add(row.name);
    start += page.rows.length;
    // An empty page ends the walk even when `total` says more: nodes were deleted meanwhile.
    if (page.rows.length === 0 || start >= page.total) return [...names];
  }
}

/** The names of the nodes matching `query`, every page of them. */
export function searchNodeNames(api: ApiConnection, query: string): Promise<string[]> {
  return collectNames((start) => {
    const params = new URLSearchParams({ q: query, rows: String(SEARCH_PAGE_ROWS), start: String(start) });
    return api.call('GET', `${api.orgPath('search', 'node')}?${params}`, searchPageSchema);
  });
}

/** A node argument holding `:` is a search query, as in knife (reference 8). */
export const isQuery = (arg: string): boolean => arg.includes(':');

export function formatNodeStates(states: readonly NodeStateBody[]): string {
  return formatColumns(
    ['Node name', 'Status', 'Availability', 'Last updated'],
    states.map((s) => [s.node_name, s.status, s.availability, s.updated_at]),
  );
}

/** Every node without arguments; else the named nodes and those the query arguments find. */
export async function nodeStatus(cli: Cli, o: { nodes: readonly string[] }): Promise<void> {
  const all = await cli.api.call('GET', cli.api.orgPath('pushy', 'node_states'), nodeStateListSchema);
  let shown = all;
  const missing: string[] = [];
  if (o.nodes.length > 0) {
    const wanted = new Set<string>();
    for (const arg of o.nodes) {
      if (!isQuery(arg)) wanted.add(arg);
      else for (const name of await searchNodeNames(cli.api, arg)) wanted.add(name);
    }
    const byName = new Map(all.map((s) => [s.node_name, s]));
    shown = [];
    for (const name of wanted) {
      const state = byName.get(name);
      if (state === undefined) missing.push(name);
      else shown.push(state);
    }
  }
  shown = [...shown].sort((a, b) => (a.node_name < b.node_name ? -1 : a.node_name > b.node_name ? 1 : 0));
  if (cli.ui.format === 'json') cli.ui.output(shown);
  else if (shown.length > 0) cli.ui.raw(formatNodeStates(shown));
  else if (missing.length === 0) cli.ui.info('No nodes.');
  if (missing.length > 0) throw new CommandError(`no such node: ${missing.join(', ')}`);
}
