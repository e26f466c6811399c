// The start-job form read into the API's start_job request: nodes named and nodes a search finds, the body checked
// by the API's own schema (jobStartSchema) and request limits, so a job started here is one the API would take.
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
  const parsed = jobStartSchema.safeParse({
    command: form.command.trim(),
    nodes,
    ...(quorum === '' ? {} : { quorum: /^\d+$/.test(quorum) ? Number(quorum) : quorum }),
    ...(timeout === '' ? {} : { run_timeout: /^\d+$/.test(timeout) ? Number(timeout) : timeout }),
    ...(form.capture === 'on' ? { capture_output: true } : {}),
  });
  if (!parsed.success) return { ok: false, error: fieldError(parsed.error.issues[0]?.path ?? []) };
  const body = parsed.data;
  if (body.command.length > deps.limits.commandLength)
    return { ok: false, error: `The command is longer than ${deps.limits.commandLength} characters.` };
  return { ok: true, job: requestOf(body) };
}

const FIELD_HELP: Record<string, string> = {
  command: 'Give the command: the name of a whitelisted command, 1 to 255 characters.',
  nodes: 'Node names are letters, digits and . _ : - only.',
  quorum: 'The quorum is a number of nodes (2) or a percentage (80%).',
  run_timeout: 'The run timeout is a whole number of seconds, at least 1.',
};

function fieldError(path: readonly PropertyKey[]): string {
  const field = String(path[0] ?? '');
  return FIELD_HELP[field] ?? `Field '${path.join('.')}' is invalid.`;
}
