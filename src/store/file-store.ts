// FileStore: the persistence port over plain files, one JSON file per document and one appended file per
// field map, for servers without Redis. Where each file lives is file-names.ts; how a change is logged,
// file-changes.ts; how files are read, file-reads.ts.
import type { Dirent } from 'node:fs';
import { access, constants, mkdir, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { hasCode } from '../lib/thrown.js';
import { realTimers, type Timers } from '../lib/timers.js';
import { logLine, parseLogLine, type Change } from './file-changes.js';
import { documentFile, fileContent, FIELDS, isHashed, JOURNAL_DIR, pathIn, unwrap } from './file-names.js';
import { fieldsLine, type FileOp } from './file-ops.js';
import { Limiter, readDoc, readFields } from './file-reads.js';
import { FileThread } from './file-thread.js';
import { checkCollection, encodeDoc } from './layout.js';
import type { CollectionName, Store, StoreOp, StoreState } from './store.js';
import { readLogs, WriteLog } from './write-log.js';

/** Makes logged changes to the files, in log order: one thread for every store of the process. */
const writer = new FileThread();
/** A checkpoint's syncs, apart from the writes so that these never wait behind them. */
const syncer = new FileThread();
/** Files read at once; keeps a 10,000-document load under the usual descriptor limit. */
const IO_SLOTS = 64;
/** How long a logged change may wait for its files to be synced, and how large the log may grow before. */
const CHECKPOINT_MS = 1000;
const CHECKPOINT_BYTES = 64 * 1024 * 1024;
/** Lines a field map file may grow to before it is rewritten with only what it holds. */
const COMPACT_LINES = 1000;

/** What the changes of one log file touched, and their writes to the files. */
interface Touched {
  files: Set<string>;
  folders: Set<string>;
  made: Array<Promise<unknown>>;
}

/**
 * Layout: file-names.ts. A field map is one line per putFields call, a JSON array of `[field, value]` pairs,
 * appended, so a call costs its own fields; a line cut short by a crash was never acknowledged and is skipped
 * when read.
 *
 * Every change is first a line of the write log in `<root>/~journal` (see write-log.ts): once that line is
 * synced the change counts as made, and a thread of the store's own (file-thread.ts) makes it to the files, in log
 * order, without a sync of their own. About once a second a checkpoint syncs, on a second thread, the files and
 * folders the log's changes touched, and deletes the log; a crash before that is made good by the next open,
 * which makes the logged changes again before anything is read or written.
 */
export class FileStore implements Store {
  readonly kind = 'file' as const;
  readonly #io = new Limiter(IO_SLOTS);

  /** The write log, once what a crash left in it has been made again. */
  readonly #ready: Promise<WriteLog>;
  /** What the changes of each log file touched, until a checkpoint has synced it. */
  readonly #unsynced = new Map<number, Touched>();
  /** Cancels the checkpoint due, if one is. */
  #checkpointTimer: (() => void) | undefined;
  #checkpointing: Promise<void> | undefined;

  /** `timers`: when checkpoints fall due; Node's unless a test runs the store on a clock of its own. */
  constructor(
    readonly root: string,
    private readonly timers: Timers = realTimers,
  ) {
    this.#ready = this.#recover();
    this.#ready.catch(() => undefined); // reported by the first operation that waits for it
  }

  /** Reads every `*.json` file of the collection's folder; a missing folder is an empty map. */
  async load(collection: CollectionName): Promise<Map<string, unknown>> {
    await this.#ready;
    checkCollection(collection);
    const dir = join(this.root, collection);
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (hasCode(err, 'ENOENT')) return new Map();
      throw err;
    }
    const files = entries.flatMap((e): Array<{ id: string | undefined; path: string }> => {
      const holds = e.isFile() ? documentFile(e.name) : undefined;
      if (holds === undefined) return [];
      return [{ id: holds === 'hashed' ? undefined : holds.id, path: join(dir, e.name) }];
    });
    const read = await Promise.all(files.map((f) => this.#io.run(() => readDoc(f.path))));
    const docs = new Map<string, unknown>();
    files.forEach((f, i) => {
      const found = read[i];
      if (!found) return;
      if (f.id !== undefined) docs.set(f.id, found.doc);
      else {
        const wrapped = unwrap(found.doc, f.path);
        docs.set(wrapped.id, wrapped.doc);
      }
    });
    return docs;
  }

  /** Reads `<collection>/<id>.json`; undefined when the file does not exist. */
  async get(collection: CollectionName, id: string): Promise<unknown> {
    await this.#ready;
    const path = this.#path(collection, id);
    const found = await this.#io.run(() => readDoc(path));
    if (found === undefined) return undefined;
    return isHashed(path) ? unwrap(found.doc, path).doc : found.doc;
  }

  /** One process writes a file store: nobody can create the document between the look and the write. */
  async putIfAbsent(collection: CollectionName, id: string, doc: unknown): Promise<unknown> {
    const stored = await this.get(collection, id);
    if (stored !== undefined) return stored;
    await this.put(collection, id, doc);
    return doc;
  }

  /** Writes `<collection>/<id>.json` through a temporary file and a rename. */
  put(collection: CollectionName, id: string, doc: unknown): Promise<void> {
    return this.apply([{ collection, id, doc }]);
  }

  putMany(collection: CollectionName, docs: ReadonlyArray<readonly [string, unknown]>): Promise<void> {
    return this.apply(docs.map(([id, doc]) => ({ collection, id, doc })));
  }

  /** One log line for every op (the commit point), then each document and field map. */
  async apply(ops: readonly StoreOp[]): Promise<void> {
    return this.#commit(
      ops.flatMap((op): Change[] => {
        checkCollection(op.collection);
        const at = [op.collection, op.id] as const;
        if ('fields' in op) return op.fields.length === 0 ? [] : [{ fields: at, line: fieldsLine(op.fields) }];
        if ('removeFields' in op) return [{ removeFields: at }];
        return 'remove' in op ? [{ remove: at }] : [{ put: at, json: encodeDoc(op.doc) }];
      }),
    );
  }

  /** Appends one line to `<collection>/<id>.fields`. */
  putFields(collection: CollectionName, id: string, fields: ReadonlyArray<readonly [string, unknown]>): Promise<void> {
    return this.apply([{ collection, id, fields }]);
  }

  /** Reads `<collection>/<id>.fields`, later lines winning; a missing file is an empty map. */
  async getFields(collection: CollectionName, id: string): Promise<Map<string, unknown>> {
    await this.#ready;
    const path = this.#path(collection, id, FIELDS);
    await writer.run([]).catch(() => undefined); // the changes made so far are in the file
    return this.#io.run(() => readFields(path));
  }

  /** Deletes `<collection>/<id>.fields` after any append to it queued before. */
  removeFields(collection: CollectionName, id: string): Promise<void> {
    return this.apply([{ collection, id, removeFields: true }]);
  }

  /** Deletes `<collection>/<id>.json` after any write to it queued before. */
  remove(collection: CollectionName, id: string): Promise<void> {
    return this.apply([{ collection, id, remove: true }]);
  }

  /** Deletes the collection's folder tree once the writes queued into it have landed. */
  async drop(collection: CollectionName): Promise<void> {
    checkCollection(collection);
    return this.#commit([{ drop: collection }]);
  }

  /** Files are not lost behind the server's back. */
  onLost(): void {}

  /** `ok` when the root folder exists (or can be created) and is writable. */
  async state(): Promise<StoreState> {
    try {
      await this.#ready;
      await mkdir(this.root, { recursive: true });
      await access(this.root, constants.W_OK);
      return 'ok';
    } catch {
      return 'unavailable';
    }
  }

  /** Waits for every queued write and drop, then syncs them and empties the log. */
  async close(): Promise<void> {
    await this.#ready.catch(() => undefined);
    await this.#checkpointing;
    await writer.run([]).catch(() => undefined);
    if (this.#unsynced.size > 0) await this.#checkpoint();
    this.#checkpointTimer?.();
    this.#checkpointTimer = undefined;
  }

  /** Logs `changes`, then makes them to the files. */
  async #commit(changes: readonly Change[]): Promise<void> {
    const log = await this.#ready;
    if (changes.length === 0) return;
    let made: Promise<void> = Promise.resolve();
    await log.append(logLine(changes), (n) => {
      let touched = this.#unsynced.get(n);
      if (touched === undefined) this.#unsynced.set(n, (touched = { files: new Set(), folders: new Set(), made: [] }));
      made = this.#make(changes, touched);
      touched.made.push(made.catch(() => undefined));
    });
    this.#scheduleCheckpoint(log);
    await made;
  }

  /**
   * Hands logged changes to the writing thread, each document written atomically and unsynced; notes in `touched`
   * what a checkpoint must sync. A change made a second time (the log replayed after a crash) leaves the files as
   * the first time: later changes are made again after it.
   */
  #make(changes: readonly Change[], touched: Touched): Promise<void> {
    const ops = changes.map((change): FileOp => {
      if ('drop' in change) {
        const dir = join(this.root, change.drop);
        touched.folders.add(dirname(dir));
        return { op: 'drop', path: dir };
      }
      const path = this.#pathOf(change);
      touched.folders.add(dirname(path));
      if ('remove' in change || 'removeFields' in change) return { op: 'remove', path };
      touched.files.add(path);
      if ('fields' in change) return { op: 'append', path, line: `${change.line}\n`, compactEvery: COMPACT_LINES };
      return { op: 'replace', path, content: fileContent(path, change.put[1], change.json) };
    });
    return writer.run(ops);
  }

  /** A checkpoint a second after the first unsynced change, or at once when the log has grown large. */
  #scheduleCheckpoint(log: WriteLog): void {
    if (this.#checkpointing !== undefined) return;
    const now = log.size >= CHECKPOINT_BYTES;
    if (this.#checkpointTimer !== undefined && !now) return;
    this.#checkpointTimer?.();
    this.#checkpointTimer = this.timers.after(
      now ? 0 : CHECKPOINT_MS,
      () => {
        this.#checkpointTimer = undefined;
        void this.#checkpoint().catch(() => undefined);
      },
      { unref: true },
    );
  }

  /**
   * Closes the current log file, syncs every file and folder its changes (and those of any earlier log a failed
   * checkpoint left) touched, then deletes those logs. Changes logged meanwhile go to the next log file.
   */
  #checkpoint(): Promise<void> {
    const run = (async () => {
      const log = await this.#ready;
      // Nothing logged since the last rotation: only what a failed checkpoint left is due.
      const closed = (await log.rotate()) ?? Math.max(0, ...this.#unsynced.keys());
      const due = [...this.#unsynced].filter(([n]) => n <= closed);
      if (due.length === 0) return;
      await this.#sync(due.map(([, touched]) => touched));
      await log.remove(closed);
      for (const [n] of due) this.#unsynced.delete(n);
    })();
    this.#checkpointing = run.then(
      () => undefined,
      () => undefined, // the logs stay, and the next checkpoint takes them again
    );
    void this.#checkpointing.then(() => {
      this.#checkpointing = undefined;
      if (this.#unsynced.size > 0) void this.#ready.then((log) => this.#scheduleCheckpoint(log));
    });
    return run;
  }

  /** Waits for the changes to be made, then syncs the files, then the folders up to the root's parent. */
  async #sync(touched: readonly Touched[]): Promise<void> {
    await Promise.all(touched.flatMap((t) => t.made));
    const top = dirname(this.root);
    const folders = new Set<string>();
    for (const t of touched) {
      for (let f of t.folders) {
        for (; !folders.has(f); f = dirname(f)) {
          folders.add(f);
          if (f === top || dirname(f) === f) break;
        }
      }
    }
    const files = new Set(touched.flatMap((t) => [...t.files]));
    await syncer.run([...files, ...folders].map((path): FileOp => ({ op: 'sync', path })));
  }

  /** Makes again, in order, the changes of the logs a crash left, syncs them and deletes the logs. */
  async #recover(): Promise<WriteLog> {
    // What the writer knows of these files (which field maps it has checked for a torn line) may be out of date.
    // Both threads start now, side by side, rather than each when first needed, and the store is ready once they
    // have: a thread's start (its modules loaded, on a busy machine in seconds) is the store's own start, not
    // the wait of its first write.
    const threads = Promise.all([writer.run([{ op: 'forget', path: this.root }]), syncer.run([])]).catch(
      () => undefined, // a thread that cannot start fails the operations given to it
    );
    const dir = join(this.root, JOURNAL_DIR);
    const { records, next } = await readLogs(dir, parseLogLine);
    const log = new WriteLog(dir, next);
    if (next > 1) {
      const touched: Touched = { files: new Set(), folders: new Set(), made: [] };
      touched.made.push(Promise.all(records.map((changes) => this.#make(changes, touched))));
      await this.#sync([touched]);
      await log.remove(next - 1);
    }
    await threads;
    return log;
  }

  #pathOf(change: Exclude<Change, { drop: CollectionName }>): string {
    if ('put' in change) return this.#path(...change.put);
    if ('remove' in change) return this.#path(...change.remove);
    return this.#path(...('fields' in change ? change.fields : change.removeFields), FIELDS);
  }

  #path(collection: CollectionName, id: string, extension?: string): string {
    return pathIn(this.root, collection, id, extension);
  }
}
