#!/usr/bin/env node
// cli: the users' command-line tool for push jobs and their schedules, node whitelists and user accounts (spec 4.4,
// 4.6). Only the process is wired here: its arguments, streams, working folder and home; the commands live in src/cli.
import { homedir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectCli, resolveCliTarget } from '../cli/cli-connection.js';
import { runTool } from '../cli/command-line.js';
import { CLI } from '../cli/commands.js';
import { exitWhenDone } from '../cli/terminal.js';

exitWhenDone(
  runTool(CLI, process.argv.slice(2), process, async (connection, ui) => ({
    api: await connectCli(resolveCliTarget({ ...connection, cwd: process.cwd(), home: homedir() })),
    ui,
    stdout: process.stdout,
    stderr: process.stderr,
    sleep: (ms) => sleep(ms),
  })),
);
