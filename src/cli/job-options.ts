// The options that make a job body, shared by `cli job start` and `cli schedule add`: their help lines, and their
// values read and checked into JobBodyOptions, so that a typo is a usage error naming the option before anything
// is sent. job-body.ts turns JobBodyOptions into the body itself.
import { z } from 'zod';
import type { JobStartBody } from '../api/push-jobs.js';
import { messageOf } from '../lib/thrown.js';
import { flag, type OptionSpec, str, type Values } from './framework.js';
import { parseRollout } from './rollout-options.js';
import { CommandError } from './terminal.js';

export const JOB_BODY_OPTIONS = {
  timeout: {
    type: 'string',
    arg: 'SECONDS',
    help: 'seconds the command may run before the job times out (server default 3600)',
  },
  quorum: {
    type: 'string',
    short: 'q',
    arg: 'N|N%',
    help: 'nodes that must commit for the command to run (default 100%)',
  },
  search: { type: 'string', short: 's', arg: 'QUERY', help: 'also run on the nodes a node search finds' },
  capture: { type: 'boolean', help: 'keep the output of each node (see cli job output)' },
  env: { type: 'string', arg: 'JSON', help: 'environment of the command, a JSON object of strings' },
  'in-dir': { type: 'string', arg: 'DIR', help: 'working folder of the command on the nodes' },
  'as-user': { type: 'string', arg: 'USER', help: 'run the command as USER on the nodes' },
  file: { type: 'string', arg: 'FILE', help: 'send FILE to the nodes with the job' },
  'voting-timeout': {
    type: 'string',
    arg: 'SECONDS',
    help: "seconds nodes have to commit (at most the server's setting)",
  },
  waves: {
    type: 'string',
    arg: 'N|N%,...',
    help: 'run in waves of these sizes, by node name; the last repeats (e.g. 1,10%,100%)',
  },
  'max-failures': {
    type: 'string',
    arg: 'N|N%',
    help: 'with --waves: start no further wave past this many failures, or share of the nodes that ran',
  },
  pause: {
    type: 'string',
    arg: 'SECONDS',
    help: 'with --waves: seconds between one wave and the next (default 0)',
  },
} satisfies Record<string, OptionSpec>;

/** A job body as the options describe it, before its search is run and its file read. */
export interface JobBodyOptions {
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
}

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

const optional = <T>(value: string | undefined, parse: (text: string) => T): T | undefined =>
  value === undefined ? undefined : parse(value);

/** The job body options of a command line: COMMAND, the NODE arguments, and the values of JOB_BODY_OPTIONS. */
export function jobBodyOptionsOf(command: string, nodes: readonly string[], v: Values): JobBodyOptions {
  return {
    command,
    nodes,
    search: str(v, 'search'),
    timeout: optional(str(v, 'timeout'), (t) => parseSeconds('--timeout', t)),
    quorum: parseQuorum(str(v, 'quorum') ?? '100%'),
    votingTimeout: optional(str(v, 'voting-timeout'), (t) => parseSeconds('--voting-timeout', t)),
    capture: flag(v, 'capture'),
    env: optional(str(v, 'env'), parseEnv),
    dir: str(v, 'in-dir'),
    asUser: str(v, 'as-user'),
    file: str(v, 'file'),
    rollout: parseRollout(str(v, 'waves'), str(v, 'max-failures'), str(v, 'pause')),
  };
}
