// The results page of `npm run bench`: the RESULT lines the benchmarks print, read back from their output, and the
// tables they make, in the columns of bench/RESULTS.md.
import t from 'tap';
import { benchCommand, parseResults, resultLine, resultsPage, resultsTable } from '../../bench/results.js';

t.test('RESULT lines are read back from the output around them, malformed ones skipped', async (t) => {
  const full = { figure: 'POST to complete p50', value: '339 ms', target: '≤ 0.3 s: not met', command: 'x' };
  const output = [
    '| a table | the benchmark printed |',
    resultLine(full),
    'RESULT {not json',
    'RESULT {"figure":"no value","command":"x"}',
    'RESULT {"figure":"f","value":"v","command":"x","ratio":3}',
    resultLine({ figure: 'bare', value: '1', command: 'y' }),
  ].join('\n');
  t.same(parseResults(output), [full, { figure: 'bare', value: '1', command: 'y' }]);
});

t.test('the command names the INFRA_BENCH_ settings, sorted and quoted where needed, and the arguments', async (t) => {
  const env = { INFRA_BENCH_ONLY: 'GET a node', INFRA_BENCH_NODES: '2000', PATH: '/usr/bin', INFRA_BENCH_X: undefined };
  t.equal(
    benchCommand('/somewhere/bench/scale.ts', ['1000,5000', '3'], env),
    "INFRA_BENCH_NODES=2000 INFRA_BENCH_ONLY='GET a node' node --import tsx bench/scale.ts 1000,5000 3",
  );
  t.equal(benchCommand('bench/signing.bench.ts', [], {}), 'node --import tsx bench/signing.bench.ts');
});

t.test(
  'a table has the six columns, a dash for what is missing, pipes escaped, the setup after the machine',
  async (t) => {
    const table = resultsTable(
      [
        { figure: 'a | b', value: '1 ms', target: '≤ 2 ms: met', ratio: '1.1 × floor', command: 'node x' },
        { figure: 'c', value: 'two\nlines', command: 'node y', setup: 'shared with the load generator' },
      ],
      '2 cores, 24 GiB, 2026-11-27',
    );
    t.equal(
      table,
      [
        '| figure | value | target: met? | vs floor or peer | command | machine |',
        '| --- | --- | --- | --- | --- | --- |',
        '| a \\| b | 1 ms | ≤ 2 ms: met | 1.1 × floor | `node x` | 2 cores, 24 GiB, 2026-11-27 |',
        '| c | two lines | — | — | `node y` | 2 cores, 24 GiB, 2026-11-27, shared with the load generator |',
      ].join('\n'),
    );
  },
);

t.test('the page heads each benchmark, and says when one failed or reported nothing', async (t) => {
  const page = resultsPage(
    [
      { bench: 'a.bench.ts', results: [{ figure: 'f', value: 'v', command: 'c' }], status: 0 },
      { bench: 'b.bench.ts', results: [], status: 1 },
      { bench: 'c.bench.ts', results: [], status: null },
    ],
    { line: 'Machine: 2 cores.', short: '2 cores' },
  );
  t.match(page, /^# Benchmark results\n\nMachine: 2 cores\.\n\n## a\.bench\.ts\n\n\| figure \|/);
  t.match(page, /## b\.bench\.ts\n\nNo figures reported\.\n\nExited with status 1\./);
  t.match(page, /## c\.bench\.ts\n\nNo figures reported\.\n\nExited with status none \(killed\)\.\n$/);
  t.notMatch(page, /a\.bench\.ts[^#]*Exited/);
});
