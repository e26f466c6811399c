#!/usr/bin/env node
// push-jobs-client: the node side of push jobs (spec 4.5). Only argv parsing lives here.
import { EXIT, runClient } from '../client/main.js';
import { parseClientArgs, USAGE, versionText } from '../client/options.js';

async function main(argv: string[]): Promise<number> {
  const parsed = parseClientArgs(argv);
  if (!parsed.ok) {
    process.stderr.write(`push-jobs-client: ${parsed.message}\n${USAGE}\n`);
    return EXIT.usage;
  }
  if (parsed.args.help) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (parsed.args.version) {
    process.stdout.write(`${versionText()}\n`);
    return EXIT.ok;
  }
  return runClient(parsed.args);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`push-jobs-client: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(EXIT.failed);
  },
);
