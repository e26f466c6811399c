// What the file store asks of its worker threads, and the field map line format both sides read and write.
import { encodeDoc } from './layout.js';

export type FileOp =
  /** Writes the file through a temporary file and a rename, unsynced. */
  | { op: 'replace'; path: string; content: string }
  /** Appends a field map line (ending in a newline), rewriting the file as one line every `compactEvery` lines. */
  | { op: 'append'; path: string; line: string; compactEvery: number }
  | { op: 'remove'; path: string }
  /** Removes a folder tree. */
  | { op: 'drop'; path: string }
  | { op: 'sync'; path: string }
  /** Forgets what the thread knows of the files under a folder, which another hand may have changed. */
  | { op: 'forget'; path: string };

export interface FileThreadRequest {
  id: number;
  ops: FileOp[];
}

/** `error`: the first operation's failure, the others having been made. */
export interface FileThreadReply {
  id: number;
  error: string | null;
}

/** One line of a field map file: a JSON array of `[field, value]` pairs. */
export function fieldsLine(fields: ReadonlyArray<readonly [string, unknown]>): string {
  return `[${fields.map(([field, value]) => `[${JSON.stringify(field)},${encodeDoc(value)}]`).join(',')}]`;
}

/**
 * The fields of a field map file's text, later lines winning and a null value removing its field; what follows the
 * last newline was cut short by a crash and is skipped.
 */
export function parseFieldLines(text: string, path: string): Map<string, unknown> {
  const fields = new Map<string, unknown>();
  const lines = text.split('\n');
  lines.pop();
  for (const [n, line] of lines.entries()) {
    let pairs: unknown;
    try {
      pairs = JSON.parse(line);
    } catch (err) {
      throw new Error(`corrupt field map ${path} at line ${n + 1}`, { cause: err });
    }
    if (!Array.isArray(pairs)) throw new Error(`corrupt field map ${path} at line ${n + 1}`);
    for (const pair of pairs) {
      if (!Array.isArray(pair) || typeof pair[0] !== 'string')
        throw new Error(`corrupt field map ${path} at line ${n + 1}`);
      if (pair[1] === null) fields.delete(pair[0]);
      else fields.set(pair[0], pair[1]);
    }
  }
  return fields;
}

/** A field map file's text folded into the one line that holds what it says. */
export function foldFieldLines(text: string, path: string): string {
  return fieldsLine([...parseFieldLines(text, path)]);
}
