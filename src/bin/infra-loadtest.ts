#!/usr/bin/env node
// infra-loadtest: plays a fleet of simulated push-jobs nodes against a server and reports the figures. Only
// the process is wired here; the tester lives in src/loadtest.
import { runLoadTest } from '../loadtest/main.js';
import { parseLoadOptions, USAGE } from '../loadtest/options.js';

async function main(argv: string[]): Promise<number> {
  const parsed = parseLoadOptions(argv);
  if (parsed.kind === 'help') {
    process.stdout.write(`${parsed.text}\n`);
    return 0;
  }
  if (parsed.kind === 'usage') {
    process.stderr.write(`infra-loadtest: ${parsed.message}\n${USAGE}\n`);
    return 2;
  }
  return runLoadTest(parsed.options, process);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`infra-loadtest: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
