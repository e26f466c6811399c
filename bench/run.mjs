// npm run bench: runs every bench/*.bench.ts (or those named on the command line) one after another, showing their
// output as it comes. Each benchmark prints its figures as `RESULT {json}` lines (report() in bench/support.ts);
// at the end this prints them as one Markdown table per benchmark, in the columns of bench/RESULTS.md, and writes
// the same to bench/latest.md, from which bench/RESULTS.md is updated by hand. The table code is bench/results.ts,
// compiled by `npm run bench` before this runs; the page is laid out by Prettier, as the repository's Markdown is.
import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const { parseResults, resultsPage, RESULT_PREFIX } = await import(
  new URL('../dist/bench/results.js', import.meta.url).href
);
const named = process.argv.slice(2);
const files =
  named.length > 0
    ? named
    : readdirSync(here)
        .filter((f) => f.endsWith('.bench.ts'))
        .sort()
        .map((f) => join(here, f));

const cores = cpus().length;
const gib = Math.round(totalmem() / 2 ** 30);
const date = new Date().toISOString().slice(0, 10);
const machine = {
  line: `Machine: ${cores} cores (${cpus()[0]?.model ?? 'unknown'}), ${gib} GiB, Node ${process.version}; ${date}.`,
  short: `${cores} cores, ${gib} GiB, ${date}`,
};
console.log(`# ${machine.line}`);

/** Runs one benchmark, its output shown as it comes but for the RESULT lines; its output and exit status. */
function run(file) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    let partial = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      output += chunk;
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (!line.startsWith(RESULT_PREFIX)) process.stdout.write(`${line}\n`);
    });
    child.once('close', (code, signal) => {
      if (partial !== '' && !partial.startsWith(RESULT_PREFIX)) process.stdout.write(`${partial}\n`);
      resolve({ output, status: signal === null ? code : null });
    });
  });
}

/** The Markdown with its tables aligned by Prettier where it is installed, else as it is. */
async function laidOut(markdown, file) {
  try {
    const prettier = await import('prettier');
    return await prettier.format(markdown, { ...(await prettier.resolveConfig(file)), parser: 'markdown' });
  } catch {
    return markdown;
  }
}

const benches = [];
for (const file of files) {
  console.log(`\n## ${basename(file)}\n`);
  const { output, status } = await run(file);
  benches.push({ bench: basename(file), results: parseResults(output), status });
}
const written = join(here, 'latest.md');
const page = await laidOut(resultsPage(benches, machine), written);
writeFileSync(written, page);
console.log(`\n${page}\nWritten to bench/latest.md.`);
process.exit(benches.every((b) => b.status === 0) ? 0 : 1);
