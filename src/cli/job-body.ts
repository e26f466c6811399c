// The job body `cli job start` sends and `cli schedule add` schedules, made from JobBodyOptions: the nodes named
// and those the search finds now, the file read from disk, each option in its field of the REST body.
import { readFile } from 'node:fs/promises';
import type { JobStartBody } from '../api/push-jobs.js';
import { codeOf } from '../lib/thrown.js';
import type { Cli } from './cli-connection.js';
import type { JobBodyOptions } from './job-options.js';
import { searchNodeNames } from './nodes.js';
import { CommandError } from './terminal.js';

/** The `file` field of the job body (reference 6.3): `raw:` and the text, or `base64:` for bytes that are not UTF-8. */
export function fileField(bytes: Buffer): string {
  try {
    return `raw:${new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)}`;
  } catch {
    return `base64:${bytes.toString('base64')}`;
  }
}

async function resolveNodes(cli: Cli, o: JobBodyOptions): Promise<string[]> {
  const found = o.search === undefined ? [] : await searchNodeNames(cli.api, o.search);
  const nodes = [...new Set([...o.nodes, ...found])];
  if (nodes.length > 0) return nodes;
  if (o.search !== undefined)
    throw new CommandError(`No nodes to run the job on: the search '${o.search}' found none.`);
  throw new CommandError(
    'No nodes to run the job on. Name them after the command, or select them with --search QUERY.',
  );
}

async function readFileField(path: string): Promise<string> {
  try {
    return fileField(await readFile(path));
  } catch (e) {
    const code = String(codeOf(e) ?? e);
    throw new CommandError(`--file: cannot read ${path} (${code})`, [], 1, { cause: e });
  }
}

export async function jobBody(cli: Cli, o: JobBodyOptions): Promise<JobStartBody> {
  const body: JobStartBody = { command: o.command, nodes: await resolveNodes(cli, o), quorum: o.quorum };
  if (o.timeout !== undefined) body.run_timeout = o.timeout;
  if (o.votingTimeout !== undefined) body.voting_timeout = o.votingTimeout;
  if (o.capture) body.capture_output = true;
  if (o.env !== undefined) body.env = o.env;
  if (o.dir !== undefined) body.dir = o.dir;
  if (o.asUser !== undefined) body.user = o.asUser;
  if (o.rollout !== undefined) body.rollout = o.rollout;
  if (o.file !== undefined) body.file = await readFileField(o.file);
  return body;
}
