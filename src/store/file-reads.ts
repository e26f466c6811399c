// How the file store reads its files: a document file's JSON, a field map's lines, and a bound on the files read
// at once, so that loading a large collection stays under the process's open-file limit.
import { readFile } from 'node:fs/promises';
import { hasCode } from '../lib/thrown.js';
import { parseFieldLines } from './file-ops.js';

/** A document file's content; undefined when the file does not exist. */
export async function readDoc(path: string): Promise<{ doc: unknown } | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (hasCode(err, 'ENOENT')) return undefined;
    throw err;
  }
  try {
    return { doc: JSON.parse(text) };
  } catch (err) {
    throw new Error(`corrupt document file ${path}`, { cause: err });
  }
}

/** The fields of a field map file; a missing file is an empty map. */
export async function readFields(path: string): Promise<Map<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (hasCode(err, 'ENOENT')) return new Map();
    throw err;
  }
  return parseFieldLines(text, path);
}

/** Runs at most `slots` tasks at once, the rest in arrival order. */
export class Limiter {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(slots: number) {
    this.#free = slots;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free -= 1;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free += 1;
    }
  }
}
