// npm run bench: runs every bench/*.bench.ts (or those named on the command line) one after another.
// Each prints Markdown table rows; bench/RESULTS.md records them with the machine and the command.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const named = process.argv.slice(2);
const files =
  named.length > 0
    ? named
    : readdirSync(here)
        .filter((f) => f.endsWith('.bench.ts'))
        .sort()
        .map((f) => join(here, f));

console.log(
  `# ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);
let failed = 0;
for (const file of files) {
  console.log(`\n## ${file.split('/').pop()}\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', file], { stdio: 'inherit' });
  if (r.status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
