// The file store's redo log. A change is one line appended to the current log file; the lines queued while one
// append is being synced go out together under one sync (group commit), so a burst of small writes costs a few
// syncs instead of one or two per document. Once its line is synced a change counts as made, and the store makes
// it to its files without syncing them; a checkpoint later rotates the log, syncs what the closed logs touched
// and deletes them. After a crash, the logs left are read back in order and made again.
import { mkdir, open, readdir, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { hasCode } from '../lib/thrown.js';

const LOG = /^(\d{15})\.log$/;

interface Queued {
  line: string;
  /** Called, in append order, once the line is synced: before any later line is appended or the log rotates. */
  landed: (log: number) => void;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** A rotation waiting behind the lines queued before it, and who hears which file it closed. */
interface Rotation {
  rotated: (closed: number | undefined) => void;
}

export class WriteLog {
  readonly #queue: Array<Queued | Rotation> = [];
  #file: FileHandle | undefined;
  #flushing = false;
  /** Bytes in the current log file. */
  #size = 0;

  /** `next`: the number of the first log file this process writes; every earlier one has been replayed. */
  constructor(
    readonly dir: string,
    private next: number,
  ) {}

  /** Appends `line` (no newline in it), then calls `landed` with the log file it landed in. */
  append(line: string, landed: (log: number) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ line, landed, resolve, reject });
      this.#flush();
    });
  }

  /** Bytes appended to the current log file, for a checkpoint to come sooner when they pile up. */
  get size(): number {
    return this.#size;
  }

  /**
   * Closes the current log file once what was queued before is appended; later lines go to a new file. Resolves
   * with the closed file's number, or undefined when nothing was appended since the last rotation.
   */
  rotate(): Promise<number | undefined> {
    return new Promise((rotated) => {
      this.#queue.push({ rotated });
      this.#flush();
    });
  }

  /** Deletes log files up to `last`, and syncs the folder so that they stay deleted. */
  async remove(last: number): Promise<void> {
    for (const n of await logNumbers(this.dir))
      if (n <= last) await unlink(logPath(this.dir, n)).catch(() => undefined);
    await syncFolder(this.dir);
  }

  #flush(): void {
    if (this.#flushing) return;
    this.#flushing = true;
    void this.#drain().finally(() => {
      this.#flushing = false;
      if (this.#queue.length > 0) this.#flush();
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const first = this.#queue[0];
      if (first !== undefined && 'rotated' in first) {
        this.#queue.shift();
        const closed = this.#file === undefined ? undefined : this.next++;
        await this.#close();
        first.rotated(closed);
        continue;
      }
      const end = this.#queue.findIndex((q) => 'rotated' in q);
      const batch = this.#queue.splice(0, end === -1 ? this.#queue.length : end) as Queued[];
      const text = batch.map((q) => `${q.line}\n`).join('');
      try {
        const file = await this.#open();
        await file.writeFile(text, 'utf8');
        await file.datasync();
        this.#size += Buffer.byteLength(text);
      } catch (err) {
        // The file may end in part of this batch: it is cut back where it can be, closed, and the next append
        // starts a new file (a torn last line is skipped when read).
        if (this.#file !== undefined) {
          await this.#file.truncate(this.#size).catch(() => undefined);
          this.next++;
        }
        await this.#close().catch(() => undefined);
        for (const q of batch) q.reject(err);
        continue;
      }
      for (const q of batch) q.landed(this.next);
      for (const q of batch) q.resolve();
    }
  }

  async #open(): Promise<FileHandle> {
    if (this.#file !== undefined) return this.#file;
    await mkdir(this.dir, { recursive: true });
    const file = await open(logPath(this.dir, this.next), 'a');
    try {
      await syncFolder(this.dir); // the new file's name is in the folder before anything in it counts as made
    } catch (err) {
      await file.close();
      throw err;
    }
    this.#file = file;
    this.#size = 0;
    return file;
  }

  async #close(): Promise<void> {
    const file = this.#file;
    this.#file = undefined;
    this.#size = 0;
    await file?.close();
  }
}

/**
 * The lines of every log file in `dir`, oldest first, and the number for the next log file. What follows a file's
 * last newline was cut short by a crash, and a line of NUL bytes is a crash's unwritten block: neither was
 * acknowledged, so both are skipped. So is a last line that does not parse; a bad line before a good one is
 * corruption.
 */
export async function readLogs<T>(dir: string, parse: (line: string) => T): Promise<{ records: T[]; next: number }> {
  const numbers = await logNumbers(dir);
  const records: T[] = [];
  for (const n of numbers) {
    const path = logPath(dir, n);
    const lines = (await readFile(path, 'utf8')).split('\n');
    lines.pop();
    let bad: { line: number; err: unknown } | undefined;
    lines.forEach((line, i) => {
      if (/^\0*$/.test(line)) return;
      if (bad) throw new Error(`corrupt write log ${path} at line ${bad.line}`, { cause: bad.err });
      try {
        records.push(parse(line));
      } catch (err) {
        bad = { line: i + 1, err };
      }
    });
  }
  return { records, next: (numbers.at(-1) ?? 0) + 1 };
}

async function logNumbers(dir: string): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if (hasCode(err, 'ENOENT')) return [];
    throw err;
  }
  return names
    .map((name) => LOG.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

function logPath(dir: string, n: number): string {
  return join(dir, `${String(n).padStart(15, '0')}.log`);
}

/**
 * Syncs the log's folder, so that a log file made or deleted in it stays so after a crash. Here rather than on the
 * store's sync thread: the first append after a rotation waits for it, and must not wait behind a checkpoint.
 */
async function syncFolder(path: string): Promise<void> {
  const folder = await open(path, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}
