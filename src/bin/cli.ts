#!/usr/bin/env node
// cli: the users' command-line tool for push jobs, node whitelists and user accounts (spec 4.4, 4.6). Only the
// command line is handled here; the commands live in src/cli.
import { homedir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectCli, resolveCliTarget } from '../cli/cli-connection.js';
import { parseCommandLine } from '../cli/commands.js';
import { EXIT, exitWhenDone, runCommand, Ui } from '../cli/output.js';

async function main(argv: string[]): Promise<number> {
  const streams = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin };
  const line = parseCommandLine(argv);
  if (line.kind === 'help') {
    process.stdout.write(`${line.text}\n`);
    return EXIT.ok;
  }
  if (line.kind === 'usage') {
    if (line.message !== null) process.stderr.write(`ERROR: ${line.message}\n`);
    process.stderr.write(`${line.text}\n`);
    return EXIT.usage;
  }
  const ui = new Ui(streams, line.format);
  return runCommand(ui, async () => {
    const target = resolveCliTarget({ ...line.connection, cwd: process.cwd(), home: homedir() });
    const api = await connectCli(target);
    await line.run({ api, ui, stdout: process.stdout, stderr: process.stderr, sleep: (ms) => sleep(ms) });
  });
}

exitWhenDone(main(process.argv.slice(2)));
