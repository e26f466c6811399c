// A change as the file store logs and makes it: a document (as JSON) written or removed, a field map line appended
// or the map removed, a collection dropped; and its line in the write log, which holds the document and the field
// map line as they are, so that replaying the log after a crash makes exactly the changes that were acknowledged.
import { z } from 'zod';
import { fieldsLine } from './file-ops.js';
import { encodeDoc } from './layout.js';
import type { CollectionName } from './store.js';

type At = readonly [CollectionName, string];

export type Change =
  | { put: At; json: string }
  | { remove: At }
  | { fields: At; line: string }
  | { removeFields: At }
  | { drop: CollectionName };

/** A log line: the changes as a JSON array, a document and a field map line written into it as they are. */
export function logLine(changes: readonly Change[]): string {
  const parts = changes.map((c) => {
    if ('put' in c) return `{"put":${JSON.stringify(c.put)},"doc":${c.json}}`;
    if ('fields' in c) return `{"fields":${JSON.stringify(c.fields)},"line":${c.line}}`;
    return JSON.stringify(c);
  });
  return `[${parts.join(',')}]`;
}

const atSchema = z.tuple([z.string(), z.string()]);
const logLineSchema = z.array(
  z.union([
    z.object({ put: atSchema, doc: z.unknown() }),
    z.object({ remove: atSchema }),
    z.object({ fields: atSchema, line: z.array(z.tuple([z.string(), z.unknown()])) }),
    z.object({ removeFields: atSchema }),
    z.object({ drop: z.string() }),
  ]),
);

/** The changes of a log line; throws on a line this store did not write. */
export function parseLogLine(line: string): Change[] {
  return logLineSchema.parse(JSON.parse(line)).map((c): Change => {
    if ('put' in c) return { put: c.put, json: encodeDoc(c.doc) };
    if ('fields' in c) return { fields: c.fields, line: fieldsLine(c.line) };
    return c;
  });
}
