// Limits on what one request may ask the server to hold (settings of push-jobs-server.rb). Each is checked
// before anything is stored, and each answers 400 naming the limit, so hostile input costs a parse at most.
import { ApiError } from './errors.js';

export interface RequestLimits {
  /** Deepest nesting of arrays and objects in a JSON body. */
  jsonDepth: number;
  /** Longest name of an object a body creates or renames. */
  nameLength: number;
  /** Most nodes one job may name. */
  jobNodes: number;
  /** Longest job command. */
  commandLength: number;
}

export const DEFAULT_LIMITS: RequestLimits = { jsonDepth: 100, nameLength: 255, jobNodes: 100_000, commandLength: 255 };

const OPEN = new Set([0x5b, 0x7b]); // [ {
const CLOSE = new Set([0x5d, 0x7d]); // ] }

/**
 * Refuses a body nested deeper than `max` from its bytes, before JSON.parse and the store walk it: a store
 * write recursing 5,000 levels deep overflows the stack.
 */
export function checkJsonDepth(raw: Buffer, max: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (inString) {
      if (b === 0x5c)
        i++; // a backslash escapes the next byte
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (OPEN.has(b)) {
      depth++;
      if (depth > max) throw ApiError.of(400, `JSON nests deeper than ${max} levels`);
    } else if (CLOSE.has(b)) depth--;
  }
}

/** The body fields that name the object being created or renamed. */
const NAME_FIELDS = ['name', 'clientname', 'username', 'groupname', 'containername', 'id'] as const;

export function checkNameLengths(body: unknown, max: number): void {
  if (body === null || typeof body !== 'object') return;
  const fields = body as Record<string, unknown>;
  for (const field of NAME_FIELDS) {
    const value = fields[field];
    if (typeof value === 'string' && value.length > max)
      throw ApiError.of(400, `Field '${field}' is longer than ${max} characters`);
  }
}
