// Reads a request body after authentication: the depth limit, JSON, the route's zod schema, then name lengths. A failure is a 400
// whose message names the field, in the reference's words (reference 2).
import type { Context } from 'hono';
import type { z } from 'zod';
import type { AuthEnv } from './authenticate.js';
import { ApiError } from './errors.js';
import { checkJsonDepth, checkNameLengths } from './limits.js';

export function parseBody<S extends z.ZodType>(c: Context<AuthEnv>, schema: S): z.infer<S> {
  const raw = c.get('rawBody');
  const limits = c.get('limits');
  checkJsonDepth(raw, limits.jsonDepth);
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    throw ApiError.of(400, 'invalid JSON');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw ApiError.of(400, 'invalid JSON');
  const parsed = schema.safeParse(json);
  if (parsed.success) {
    checkNameLengths(parsed.data, limits.nameLength);
    return parsed.data;
  }
  throw ApiError.of(400, describeIssue(parsed.error.issues[0], json));
}

function describeIssue(issue: z.core.$ZodIssue | undefined, json: object): string {
  if (!issue) return 'invalid request body';
  if (issue.code === 'unrecognized_keys') return `Invalid key ${issue.keys.join(', ')} in request body`;
  if (issue.code === 'custom') return issue.message;
  const field = issue.path.join('.');
  if (issue.code === 'invalid_type' && valueAt(json, issue.path) === undefined) return `Field '${field}' missing`;
  return `Field '${field}' invalid`;
}

function valueAt(json: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = json;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}
