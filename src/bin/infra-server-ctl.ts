#!/usr/bin/env node
// infra-server-ctl: administration commands run as the superuser (spec 4.6). Only the process is wired here: its
// arguments and streams; the commands live in src/cli/ctl.
import { runTool } from '../cli/command-line.js';
import { CTL } from '../cli/ctl/commands.js';
import { connectCtl } from '../cli/ctl/connection.js';
import { exitWhenDone } from '../cli/terminal.js';

exitWhenDone(
  runTool(CTL, process.argv.slice(2), process, async (source, ui) => ({ api: await connectCtl(source), ui })),
);
