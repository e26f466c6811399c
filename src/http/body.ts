// Reads a request body after authentication: JSON first, then the route's zod schema. A failure is a 400
// whose message names the field, in the reference's words (reference 2).
import type { z } from 'zod';
import { ApiError } from './errors.js';

export function parseBody<S extends z.ZodType>(raw: Buffer, schema: S): z.infer<S> {
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    throw ApiError.of(400, 'invalid JSON');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw ApiError.of(400, 'invalid JSON');
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
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
