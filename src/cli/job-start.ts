// `cli job start` (spec 4.4; reference 8): the options turned into a job body, the POST, the wait with its
// progress line, and the report. Success means the job completed and every node succeeded.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { jobCreatedSchema, type JobStartBody } from '../api/push-jobs.js';
import { codeOf, messageOf } from '../lib/thrown.js';
import type { Cli } from './cli-connection.js';
import { formatJobReport, jobFailure } from './job-report.js';
import { waitForJob, type WaitOptions } from './job-watch.js';
import { searchNodeNames } from './nodes.js';
import { CommandError } from './terminal.js';
import { ProgressPrinter } from './progress.js';

/** `N` is sent as a count, `N%` as given: the server resolves percentages against the job's nodes. */
export function parseQuorum(text: string): number | string {
  const m = /^(\d+)(%?)$/.exec(text.trim());
  const value = Number(m?.[1]);
  if (m === null || !Number.isSafeInteger(value) || (m[2] === '%' && (value < 1 || value > 100))) {
    throw CommandError.usage(`-q/--quorum: '${text}' is not a node count or a percentage from 1% to 100%`);
  }
  return m[2] === '%' ? `${value}%` : value;
}

/** A whole number of seconds greater than 0, for `option`. */
export function parseSeconds(option: string, text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value <= 0) {
    throw CommandError.usage(`${option}: '${text}' is not a whole number of seconds greater than 0`);
  }
  return value;
}

/** Seconds between polls; fractions allowed. */
export function parsePollInterval(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw CommandError.usage(`--poll-interval: '${text}' is not a number of seconds greater than 0`);
  }
  return value;
}

/** The job's environment: a JSON object whose values are strings. */
export function parseEnv(text: string): Record<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw CommandError.usage(`--env: not valid JSON (${messageOf(e)})`);
  }
  const parsed = z.record(z.string(), z.string()).safeParse(json);
  if (json === null || typeof json !== 'object' || Array.isArray(json) || !parsed.success) {
    const bad = parsed.success ? undefined : parsed.error.issues[0]?.path[0];
    const why = bad === undefined ? 'expected an object' : `the value of '${String(bad)}' is not a string`;
    throw CommandError.usage(`--env: ${why}, such as {"NAME": "value"}`);
  }
  return parsed.data;
}

/** The `file` field of the job body (reference 6.3): `raw:` and the text, or `base64:` for bytes that are not UTF-8. */
export function fileField(bytes: Buffer): string {
  try {
    return `raw:${new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)}`;
  } catch {
    return `base64:${bytes.toString('base64')}`;
  }
}

export interface JobStartOptions {
  command: string;
  nodes: readonly string[];
  search?: string;
  /** run_timeout, seconds. */
  timeout?: number;
  quorum: number | string;
  votingTimeout?: number;
  capture: boolean;
  env?: Record<string, string>;
  dir?: string;
  asUser?: string;
  /** A file path whose contents the nodes receive. */
  file?: string;
  /** Run in waves (`--waves`, `--max-failures`, `--pause`). */
  rollout?: JobStartBody['rollout'];
  nowait: boolean;
  pollSeconds: number;
  verbose: boolean;
}

async function resolveNodes(cli: Cli, o: JobStartOptions): Promise<string[]> {
  const found = o.search === undefined ? [] : await searchNodeNames(cli.api, o.search);
  const nodes = [...new Set([...o.nodes, ...found])];
  if (nodes.length > 0) return nodes;
  if (o.search !== undefined)
    throw new CommandError(`No nodes to run the job on: the search '${o.search}' found none.`);
  throw new CommandError(
    'No nodes to run the job on. Name them after the command, or select them with --search QUERY.',
  );
}

async function jobBody(cli: Cli, o: JobStartOptions): Promise<JobStartBody> {
  const body: JobStartBody = { command: o.command, nodes: await resolveNodes(cli, o), quorum: o.quorum };
  if (o.timeout !== undefined) body.run_timeout = o.timeout;
  if (o.votingTimeout !== undefined) body.voting_timeout = o.votingTimeout;
  if (o.capture) body.capture_output = true;
  if (o.env !== undefined) body.env = o.env;
  if (o.dir !== undefined) body.dir = o.dir;
  if (o.asUser !== undefined) body.user = o.asUser;
  if (o.rollout !== undefined) body.rollout = o.rollout;
  if (o.file !== undefined) {
    try {
      body.file = fileField(await readFile(o.file));
    } catch (e) {
      const code = String(codeOf(e) ?? e);
      throw new CommandError(`--file: cannot read ${o.file} (${code})`, [], 1, { cause: e });
    }
  }
  return body;
}

export async function jobStart(cli: Cli, o: JobStartOptions): Promise<void> {
  const json = cli.ui.format === 'json';
  const body = await jobBody(cli, o);
  const started = await cli.api.call('POST', cli.api.orgPath('pushy', 'jobs'), jobCreatedSchema, body);
  // With -F json, stdout carries only the JSON document; the rest goes to stderr.
  const say = json ? (text: string) => cli.ui.info(text) : (text: string) => cli.ui.msg(text);
  if (o.nowait) {
    if (json) cli.ui.output(started);
    else say(`Started.  Job ID: ${started.id}`);
    return;
  }
  say(`Started.  Job ID: ${started.id}`);
  await watchJob(cli, started.id, o);
}

/** `cli job watch`, and the wait of `cli job start`: progress while the job runs, then its report. */
export async function watchJob(cli: Cli, id: string, o: WaitOptions): Promise<void> {
  const json = cli.ui.format === 'json';
  const job = await waitForJob(cli, id, o, new ProgressPrinter(json ? cli.stderr : cli.stdout));
  if (json) cli.ui.output(job);
  else cli.ui.raw(formatJobReport(job));
  const failure = jobFailure(job);
  if (failure !== null) throw new CommandError(failure);
}
