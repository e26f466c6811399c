// The start-job form read into the API's start_job request: nodes named and nodes a search finds, waves as the cli
// writes them (1,10%,100%), the body checked by the API's own schema (jobStartSchema) and request limits, so a job
// started here is one the API would take.
import { z } from 'zod';
import { requestOf, type JobRequest } from '../../../../actors/push/job-request.js';
import { jobStartSchema } from '../../../api/push-jobs.js';
import { fromOrg } from '../ui-ask.js';
import type { UiCtx, UiDeps } from '../ui-env.js';

export const startFormSchema = z.object({
  command: z.string().max(10_000),
  nodes: z.string().max(10_000_000).default(''),
  search: z.string().max(10_000).default(''),
  quorum: z.string().max(20).default(''),
  run_timeout: z.string().max(20).default(''),
  /** A checkbox: sent as `on` when ticked, absent otherwise. */
  capture: z.literal('on').optional(),
  waves: z.string().max(10_000).default(''),
  max_failures: z.string().max(20).default(''),
  pause: z.string().max(20).default(''),
});
export type StartForm = z.infer<typeof startFormSchema>;

export const pushAccessSchema = z.object({ read: z.boolean(), write: z.boolean() });

const nodeSearchSchema = z.object({ rows: z.array(z.object({ name: z.string() }).nullable()) });

export type Built = { ok: true; job: JobRequest } | { ok: false; error: string };

export async function jobRequestFrom(c: UiCtx, deps: UiDeps, org: string, form: StartForm): Promise<Built> {
  const named = form.nodes.split(/[\s,]+/).filter((n) => n !== '');
  const query = form.search.trim();
  let found: string[] = [];
  if (query !== '') {
    const rows = deps.limits.jobNodes + 1;
    const answer = await fromOrg(
      c,
      deps,
      org,
      { type: 'search', index: 'node', q: query, start: 0, rows },
      nodeSearchSchema,
    );
    found = answer.rows.flatMap((r) => (r ? [r.name] : []));
    if (found.length === 0 && named.length === 0) return { ok: false, error: `The search '${query}' found no nodes.` };
  }
  const nodes = [...new Set([...named, ...found])];
  if (nodes.length === 0)
    return { ok: false, error: 'Name at least one node, or give a search query that finds some.' };
  if (nodes.length > deps.limits.jobNodes)
    return { ok: false, error: `A job may name at most ${deps.limits.jobNodes} nodes.` };
  const quorum = form.quorum.trim();
  const timeout = form.run_timeout.trim();
  const rollout = rolloutOf(form);
  if (rollout === 'unasked') return { ok: false, error: 'Max failures and pause apply to waves: give the waves too.' };
  const parsed = jobStartSchema.safeParse({
    command: form.command.trim(),
    nodes,
    ...(quorum === '' ? {} : { quorum: countOr(quorum) }),
    ...(timeout === '' ? {} : { run_timeout: countOr(timeout) }),
    ...(form.capture === 'on' ? { capture_output: true } : {}),
    ...(rollout === undefined ? {} : { rollout }),
  });
  if (!parsed.success) return { ok: false, error: fieldError(parsed.error.issues[0]?.path ?? []) };
  const body = parsed.data;
  if (body.command.length > deps.limits.commandLength)
    return { ok: false, error: `The command is longer than ${deps.limits.commandLength} characters.` };
  return { ok: true, job: requestOf(body) };
}

/** A count stays a number for the schema; anything else goes as typed, for the schema to name. */
const countOr = (text: string): number | string => (/^\d+$/.test(text) ? Number(text) : text);

/** The rollout the form asks for; `unasked` when it gives a budget or a pause but no waves. */
function rolloutOf(form: StartForm): Record<string, unknown> | 'unasked' | undefined {
  const waves = form.waves.trim();
  const budget = form.max_failures.trim();
  const pause = form.pause.trim();
  if (waves === '') return budget === '' && pause === '' ? undefined : 'unasked';
  return {
    waves: waves.split(/\s*,\s*/).map(countOr),
    ...(budget === '' ? {} : { max_failures: countOr(budget) }),
    ...(pause === '' ? {} : { pause: countOr(pause) }),
  };
}

const FIELD_HELP: Record<string, string> = {
  command: 'Give the command: the name of a whitelisted command, 1 to 255 characters.',
  nodes: 'Node names are letters, digits and . _ : - only.',
  quorum: 'The quorum is a number of nodes (2) or a percentage (80%).',
  run_timeout: 'The run timeout is a whole number of seconds, at least 1.',
  'rollout.waves':
    'Waves are sizes separated by commas, each a count of at least 1 or a percentage up to 100% (1,10%,100%).',
  'rollout.max_failures': 'Max failures is a number of nodes (2) or a percentage of the nodes that ran (10%).',
  'rollout.pause': 'The pause is a whole number of seconds, at most 86400.',
};

function fieldError(path: readonly PropertyKey[]): string {
  const [field, inner] = path.map(String);
  const help = FIELD_HELP[field === 'rollout' ? `rollout.${inner}` : (field ?? '')];
  return help ?? `Field '${path.join('.')}' is invalid.`;
}
