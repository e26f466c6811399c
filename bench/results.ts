// A benchmark's figures as rows of the results page. Each benchmark prints its figures as `RESULT {json}` lines
// (report() in support.ts); `npm run bench` (run.mjs) gathers them into one table per benchmark, in the columns of
// bench/RESULTS.md, prints the tables and writes them to bench/latest.md.
import { basename } from 'node:path';

export interface Result {
  figure: string;
  value: string;
  /** The target and whether it is met, e.g. "≤ 50 ms: met"; absent where there is none. */
  target?: string;
  /** The ratio to a floor or a peer measured in the same run, e.g. "1.32 × floor". */
  ratio?: string;
  /** How to run it again. */
  command: string;
  /** What the machine was shared with, or how the benchmark used it, e.g. "shared with the load generator". */
  setup?: string;
}

export const RESULT_PREFIX = 'RESULT ';

export const resultLine = (r: Result): string => `${RESULT_PREFIX}${JSON.stringify(r)}`;

const isText = (v: unknown): v is string => typeof v === 'string';
const optionalText = (v: unknown): boolean => v === undefined || isText(v);

/** The results in a benchmark's output, in order; every other line is left alone. */
export function parseResults(output: string): Result[] {
  const results: Result[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith(RESULT_PREFIX)) continue;
    let r: unknown;
    try {
      r = JSON.parse(line.slice(RESULT_PREFIX.length));
    } catch {
      continue;
    }
    if (typeof r !== 'object' || r === null) continue;
    const o = r as Record<string, unknown>;
    if (!isText(o.figure) || !isText(o.value) || !isText(o.command)) continue;
    if (!optionalText(o.target) || !optionalText(o.ratio) || !optionalText(o.setup)) continue;
    results.push({
      figure: o.figure,
      value: o.value,
      command: o.command,
      ...(isText(o.target) ? { target: o.target } : {}),
      ...(isText(o.ratio) ? { ratio: o.ratio } : {}),
      ...(isText(o.setup) ? { setup: o.setup } : {}),
    });
  }
  return results;
}

const quoted = (v: string): string => (/^[\w.,:/=@%+-]*$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);

/**
 * The command line that ran a benchmark: its INFRA_BENCH_* settings, then `node --import tsx bench/FILE` with its
 * arguments.
 */
export function benchCommand(script: string, args: readonly string[], env: Record<string, string | undefined>): string {
  const settings = Object.keys(env)
    .filter((k) => k.startsWith('INFRA_BENCH_') && env[k] !== undefined)
    .sort()
    .map((k) => `${k}=${quoted(env[k] ?? '')}`);
  return [...settings, 'node --import tsx', `bench/${basename(script)}`, ...args.map(quoted)].join(' ');
}

/** A Markdown table cell: one line, its pipes escaped, a dash when empty. */
const cell = (text: string | undefined): string => {
  const t = (text ?? '').replace(/\s*\n\s*/g, ' ').trim();
  return t === '' ? '—' : t.replace(/\|/g, '\\|');
};

export const COLUMNS = ['figure', 'value', 'target: met?', 'vs floor or peer', 'command', 'machine'] as const;

/** One benchmark's results as a Markdown table in the columns of bench/RESULTS.md; `machine` fills the last. */
export function resultsTable(results: readonly Result[], machine: string): string {
  const rows = results.map((r) =>
    [r.figure, r.value, r.target, r.ratio, `\`${r.command}\``, r.setup ? `${machine}, ${r.setup}` : machine].map(cell),
  );
  return [COLUMNS, COLUMNS.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

export interface BenchResults {
  /** The benchmark's file name. */
  bench: string;
  results: readonly Result[];
  /** Its exit status: a benchmark that failed says so under its table. */
  status: number | null;
}

/** The whole page: a heading with the machine, then a section per benchmark. */
export function resultsPage(benches: readonly BenchResults[], machine: { line: string; short: string }): string {
  const parts = [`# Benchmark results\n\n${machine.line}`];
  for (const b of benches) {
    const body = b.results.length > 0 ? resultsTable(b.results, machine.short) : 'No figures reported.';
    const failed = b.status === 0 ? '' : `\n\nExited with status ${b.status ?? 'none (killed)'}.`;
    parts.push(`## ${b.bench}\n\n${body}${failed}`);
  }
  return `${parts.join('\n\n')}\n`;
}
