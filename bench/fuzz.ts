// The fuzz tests at length: `node --import tsx bench/fuzz.ts [RUNS] [SEED]` runs the parser fuzz tests with RUNS
// cases each (default 200,000) and the HTTP fuzz with RUNS/40, on a random seed unless one is given, and prints
// one Markdown row per file. Not a *.bench.ts: `npm run bench` leaves it out, it is run on purpose.
import { spawnSync } from 'node:child_process';

const runs = Number(process.argv[2] ?? 200_000);
const seed = Number(process.argv[3] ?? Math.floor(Math.random() * 2 ** 31));
const files: Array<[string, number]> = [
  ['test/unit/fuzz.test.ts', runs],
  ['test/integration/api-fuzz.test.ts', Math.max(1, Math.floor(runs / 40))],
];

console.log(`seed ${seed}\n`);
console.log('| file | cases per property | result | seconds |');
console.log('|---|---:|---|---:|');
let failed = false;
for (const [file, count] of files) {
  const started = Date.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', file], {
    // TAP_TIMEOUT: a long run outlasts tap's 30 s default per file.
    env: {
      ...process.env,
      TAP_TIMEOUT: '86400',
      INFRA_FUZZ_SEED: String(seed),
      INFRA_FUZZ_RUNS: String(count),
      INFRA_FUZZ_HTTP_RUNS: String(count),
    },
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  const ok = r.status === 0;
  failed ||= !ok;
  console.log(
    `| ${file} | ${count} | ${ok ? 'no failure' : 'FAILED'} | ${((Date.now() - started) / 1000).toFixed(0)} |`,
  );
  if (!ok) console.log(`\n${r.stdout}\n${r.stderr}`);
}
process.exit(failed ? 1 : 0);
