// bench/grafana-dashboard.json charts only what the server exports: every PromQL query is checked against the
// names a running server's GET /metrics declares, and every infra_ metric has a panel.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { z } from 'zod';
import { scrape } from '../support/metrics.js';
import { REPO_ROOT } from '../support/process-run.js';
import { startTestServer } from '../support/server.js';

const DASHBOARD = join(REPO_ROOT, 'bench', 'grafana-dashboard.json');

const targetSchema = z.object({ refId: z.string(), expr: z.string().min(1), legendFormat: z.string() });
const panelSchema = z.object({
  id: z.int(),
  type: z.string(),
  title: z.string().min(1),
  targets: z.array(targetSchema).optional(),
});
const dashboardSchema = z.object({
  title: z.string(),
  uid: z.string(),
  panels: z.array(panelSchema).min(1),
  templating: z.object({ list: z.array(z.object({ name: z.string(), query: z.unknown().optional() })) }),
});

// PromQL words that are not metric names: keywords, operators spelt as words, and number literals.
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression reads: identifiers left once strings, label matchers, ranges and grouping
 * clauses are cut out, other than function calls and keywords.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const word = m[0];
    const after = bare.slice((m.index ?? 0) + word.length).trimStart();
    if (after.startsWith('(') || KEYWORDS.has(word.toLowerCase())) continue;
    names.push(word);
  }
  return names;
}

t.test('the query reader finds metric names and nothing else', async (t) => {
  t.same(
    metricNames(
      'histogram_quantile(0.99, sum by (le, route) (rate(infra_http_request_duration_seconds_bucket{route=~"/a.*"}[$__rate_interval])))',
    ),
    ['infra_http_request_duration_seconds_bucket'],
  );
  t.same(metricNames('rate(a_total[5m]) - rate(b_total[5m]) > 0'), ['a_total', 'b_total']);
  t.same(metricNames('sum by (org) (x{org=~"$org"}) / on (org) group_left y'), ['x', 'y']);
});

t.test('every dashboard query names only metrics a running server exports', async (t) => {
  const dashboard = dashboardSchema.parse(JSON.parse(await readFile(DASHBOARD, 'utf8')));
  const s = await startTestServer(t, 'file', { metrics_port: 0 });
  const m = await scrape(s.running.metricsUrl ?? '');
  t.equal(m.status, 200);

  const charted = new Set<string>();
  const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((q) => ({ panel: p.title, expr: q.expr })));
  t.ok(queries.length >= 10, `the dashboard has queries (${queries.length})`);
  for (const { panel, expr } of queries) {
    const names = metricNames(expr);
    t.ok(names.length > 0, `${panel}: ${expr} reads a metric`);
    for (const name of names) {
      t.ok(m.names.has(name), `${panel}: ${name} is exported`);
      charted.add(name);
    }
  }
  for (const v of dashboard.templating.list) {
    const query = JSON.stringify(v.query ?? '');
    for (const [, name = ''] of query.matchAll(/label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*)/g))
      t.ok(m.names.has(name), `variable ${v.name}: ${name} is exported`);
  }

  const families = [...m.text.matchAll(/^# TYPE (infra_\S+) (\w+)$/gm)];
  t.ok(families.length >= 10, `the server exports infra_ metrics (${families.length})`);
  for (const [, family = '', type] of families) {
    const series = type === 'histogram' ? [`${family}_bucket`, `${family}_sum`, `${family}_count`] : [family];
    t.ok(
      series.some((n) => charted.has(n)),
      `${family} has a panel`,
    );
  }
});
