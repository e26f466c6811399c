// The dashboard's way into the actor tree: the same ops the API routes send, with the signed-in user's
// RequestContext, so every page is allowed or refused by the actors' own ACL checks. Answers pass a zod schema.
import type { Ref } from 'nact';
import { z } from 'zod';
import type { OrgOp } from '../../../actors/org/handlers.js';
import type { Reply } from '../../../actors/shared/reply.js';
import { ask } from '../../../actors/system.js';
import type { UserOp } from '../../../actors/users/user-ops.js';
import { PageError, type UiCtx, type UiDeps } from './ui-env.js';

export async function orgReply(c: UiCtx, deps: UiDeps, org: string, op: OrgOp): Promise<Reply> {
  const ref = deps.system.org(org);
  if (!ref) throw new PageError(404, `Organization '${org}' does not exist.`);
  const ctx = c.get('rc');
  return ask(ref, (replyTo: Ref<Reply>) => ({ type: 'request' as const, ctx, op, replyTo }));
}

export async function usersReply(c: UiCtx, deps: UiDeps, op: UserOp): Promise<Reply> {
  const ctx = c.get('rc');
  return ask(deps.system.users, (replyTo: Ref<Reply>) => ({ type: 'request' as const, ctx, op, replyTo }));
}

/** The organization's answer to `op` read through `schema`; a refusal becomes an error page with its status. */
export async function fromOrg<S extends z.ZodType>(
  c: UiCtx,
  deps: UiDeps,
  org: string,
  op: OrgOp,
  schema: S,
): Promise<z.infer<S>> {
  return answer(await orgReply(c, deps, org, op), schema);
}

export function answer<S extends z.ZodType>(reply: Reply, schema: S): z.infer<S> {
  if (reply.status >= 300) throw new PageError(errorStatus(reply.status), replyMessage(reply));
  return schema.parse(reply.body);
}

const errorBody = z.object({ error: z.union([z.string(), z.array(z.string())]) });

/** The message of an actor's refusal, `{"error": [...]}` or `{"error": "..."}`, in words a page can show. */
export function replyMessage(reply: Reply): string {
  const parsed = errorBody.safeParse(reply.body);
  if (!parsed.success) return `The server answered ${reply.status}.`;
  const text = Array.isArray(parsed.data.error) ? parsed.data.error.join(' ') : parsed.data.error;
  return reply.status === 403 ? `Not allowed: ${text}.` : text;
}

/** The status of a refusal as a page answers it (an actor's reply status; 500 if it is not an error's). */
export function errorStatus(status: number): PageError['status'] {
  return status >= 400 && status <= 599 ? (status as PageError['status']) : 500;
}
