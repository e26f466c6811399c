// FileStore: the persistence port over plain files, one JSON file per document and one appended file per
// field map, for servers without Redis.
import { createHash, randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import {
  access,
  constants,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  unlink,
  type FileHandle,
} from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import { checkCollection, encodeDoc } from './keys.js';
import { z } from 'zod';
import type { CollectionName, Store, StoreOp, StoreState } from './store.js';

/** Longest file name most file systems accept, in bytes. */
const NAME_MAX = 255;
/** Open files at once; keeps a 10,000-document load or putMany under the usual descriptor limit. */
const IO_SLOTS = 64;

/**
 * Layout: `<root>/<collection path>/<encodeURIComponent(id)>.json`. Temporary files are named
 * `~<random>.tmp`: never `.json`, so load skips them, and `~` never starts a collection folder. A field map
 * is `<encodeURIComponent(id)>.fields`: one line per putFields call, a JSON array of `[field, value]` pairs,
 * appended and synced, so a call costs its own fields; a line cut short by a crash was never acknowledged and
 * is skipped when read.
 */
export class FileStore implements Store {
  readonly kind = 'file' as const;
  readonly #io = new Limiter(IO_SLOTS);
  /** Last queued write per document file: writes to one file run in call order, so the last put wins. */
  readonly #tails = new Map<string, Promise<void>>();
  /**
   * Lines appended to each field map since this store opened it or last compacted it. The first append checks
   * the file's tail; every COMPACT_LINES lines the file is rewritten as one line, so a map written forever (node
   * states) stays the size of what it holds.
   */
  readonly #appended = new Map<string, number>();
  /** Settles when every drop asked for so far is done; writes queued later wait for it. */
  #barrier: Promise<void> = Promise.resolve();

  /** Journals left by a crash are replayed before anything else is read or written. */
  readonly #ready: Promise<void>;
  #journals = 0;

  constructor(readonly root: string) {
    this.#ready = this.#replayJournals();
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
      if (!e.isFile()) return [];
      const path = join(dir, e.name);
      if (e.name.startsWith(HASHED_PREFIX) && e.name.endsWith('.json')) return [{ id: undefined, path }];
      const id = idOf(e.name);
      return id === undefined ? [] : [{ id, path }];
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

  /** Writes `<collection>/<id>.json` through a temporary file, fsync and rename. */
  async put(collection: CollectionName, id: string, doc: unknown): Promise<void> {
    await this.#ready;
    const path = this.#path(collection, id);
    const json = fileContent(path, id, encodeDoc(doc));
    return this.#enqueue(path, () => writeAtomically(path, json));
  }

  /** One atomic file write per document, at most IO_SLOTS at a time. */
  async putMany(collection: CollectionName, docs: ReadonlyArray<readonly [string, unknown]>): Promise<void> {
    await this.#ready;
    const files = docs.map(([id, doc]) => {
      const path = this.#path(collection, id);
      return { path, json: fileContent(path, id, encodeDoc(doc)) };
    });
    await Promise.all(files.map(({ path, json }) => this.#enqueue(path, () => writeAtomically(path, json))));
  }

  /**
   * Writes a journal of every op first (synced and renamed into place: that is the commit point), then each
   * document, then deletes the journal. A crash after the commit point is finished by the next open.
   */
  async apply(ops: readonly StoreOp[]): Promise<void> {
    await this.#ready;
    const entries = ops.flatMap((op): JournalEntry[] => {
      checkCollection(op.collection);
      if ('fields' in op)
        return op.fields.length === 0 ? [] : [{ fields: [op.collection, op.id, fieldsLine(op.fields)] }];
      if ('removeFields' in op) return [{ removeFields: [op.collection, op.id] }];
      return 'remove' in op ? [[op.collection, op.id, null]] : [[op.collection, op.id, encodeDoc(op.doc)]];
    });
    if (entries.length === 0) return;
    const journal = join(
      this.root,
      JOURNAL_DIR,
      `${String(Date.now()).padStart(15, '0')}-${String(++this.#journals).padStart(9, '0')}.json`,
    );
    await this.#io.run(() => writeAtomically(journal, JSON.stringify(entries)));
    await this.#replay(entries);
    await unlink(journal);
  }

  /** Appends one line to `<collection>/<id>.fields` and syncs it. */
  async putFields(
    collection: CollectionName,
    id: string,
    fields: ReadonlyArray<readonly [string, unknown]>,
  ): Promise<void> {
    if (fields.length === 0) return;
    await this.#ready;
    return this.#appendFields(this.#path(collection, id, FIELDS), fieldsLine(fields));
  }

  /** Queues one line's append to a field map, and a compaction every COMPACT_LINES lines. */
  #appendFields(path: string, fieldsText: string): Promise<void> {
    const line = `${fieldsText}\n`;
    const lines = this.#appended.get(path);
    this.#appended.set(path, ((lines ?? 0) + 1) % COMPACT_LINES);
    const appended = this.#enqueue(path, () => appendSynced(path, line, lines === undefined));
    if (lines === COMPACT_LINES - 1) {
      // Queued behind the append, so it holds it; nobody waits for it, and a failure only leaves the file long.
      void this.#enqueue(path, async () => {
        await writeAtomically(path, `${fieldsLine([...(await readFields(path))])}\n`);
      }).catch(() => undefined);
    }
    return appended;
  }

  /** Reads `<collection>/<id>.fields`, later lines winning; a missing file is an empty map. */
  async getFields(collection: CollectionName, id: string): Promise<Map<string, unknown>> {
    await this.#ready;
    const path = this.#path(collection, id, FIELDS);
    await this.#tails.get(path);
    return this.#io.run(() => readFields(path));
  }

  /** Deletes `<collection>/<id>.fields` after any append to it queued before. */
  async removeFields(collection: CollectionName, id: string): Promise<void> {
    await this.#ready;
    const path = this.#path(collection, id, FIELDS);
    return this.#enqueue(path, () => unlink(path).catch(ignoreCode('ENOENT')));
  }

  /** Deletes `<collection>/<id>.json` after any write to it queued before. */
  async remove(collection: CollectionName, id: string): Promise<void> {
    await this.#ready;
    const path = this.#path(collection, id);
    return this.#enqueue(path, () => unlink(path).catch(ignoreCode('ENOENT')));
  }

  /** Deletes the collection's folder tree once the writes queued into it have landed. */
  async drop(collection: CollectionName): Promise<void> {
    await this.#ready;
    checkCollection(collection);
    const dir = join(this.root, collection);
    const inside = [...this.#tails].filter(([path]) => path.startsWith(dir + sep)).map(([, tail]) => tail);
    const done = Promise.all([this.#barrier, ...inside]).then(() => rm(dir, { recursive: true, force: true }));
    this.#barrier = done.catch(() => undefined);
    return done;
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

  /** Waits for every queued write and drop. */
  async close(): Promise<void> {
    await Promise.all([...this.#tails.values(), this.#barrier]);
  }

  /**
   * Performs a journal's entries, each document atomically, in order. A journal replayed after a crash may append
   * a field map line a second time: the same fields with the same values, which changes nothing.
   */
  async #replay(entries: readonly JournalEntry[]): Promise<void> {
    await Promise.all(
      entries.map((entry) => {
        if ('fields' in entry) {
          const [collection, id, line] = entry.fields;
          return this.#appendFields(this.#path(collection, id, FIELDS), line);
        }
        if ('removeFields' in entry) {
          const [collection, id] = entry.removeFields;
          const path = this.#path(collection, id, FIELDS);
          return this.#enqueue(path, () => unlink(path).catch(ignoreCode('ENOENT')));
        }
        const [collection, id, json] = entry;
        const path = this.#path(collection, id);
        return this.#enqueue(path, () =>
          json === null ? unlink(path).catch(ignoreCode('ENOENT')) : writeAtomically(path, fileContent(path, id, json)),
        );
      }),
    );
  }

  /** Finishes the journals a crash left, oldest first. */
  async #replayJournals(): Promise<void> {
    const dir = join(this.root, JOURNAL_DIR);
    let names: string[];
    try {
      names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort();
    } catch (err) {
      if (hasCode(err, 'ENOENT')) return;
      throw err;
    }
    for (const name of names) {
      const path = join(dir, name);
      const entries = journalSchema.parse(JSON.parse(await readFile(path, 'utf8')));
      await this.#replay(entries);
      await unlink(path);
    }
  }

  #path(collection: CollectionName, id: string, extension = DOCUMENT): string {
    checkCollection(collection);
    const plain = `${encodeURIComponent(id)}${extension}`;
    // An id too long for a file name is stored under its hash; a document keeps its id inside the file.
    const name =
      Buffer.byteLength(plain) > NAME_MAX
        ? `${HASHED_PREFIX}${createHash('sha256').update(id).digest('hex')}${extension}`
        : plain;
    return join(this.root, collection, name);
  }

  #enqueue(path: string, write: () => Promise<void>): Promise<void> {
    const previous = this.#tails.get(path) ?? Promise.resolve();
    const result = Promise.all([previous, this.#barrier]).then(() => this.#io.run(write));
    const tail = result.catch(() => undefined);
    this.#tails.set(path, tail);
    void tail.then(() => {
      if (this.#tails.get(path) === tail) this.#tails.delete(path);
    });
    return result;
  }
}

const DOCUMENT = '.json';
/** Journals of apply(): `~` never starts a collection folder. */
const JOURNAL_DIR = '~journal';
/**
 * [collection, id, the document as JSON, or null to remove it]; or a field map line to append to the map of
 * [collection, id]; or a field map to remove.
 */
const journalEntrySchema = z.union([
  z.tuple([z.string(), z.string(), z.string().nullable()]),
  z.object({ fields: z.tuple([z.string(), z.string(), z.string()]) }),
  z.object({ removeFields: z.tuple([z.string(), z.string()]) }),
]);
type JournalEntry = z.infer<typeof journalEntrySchema>;
const journalSchema = z.array(journalEntrySchema);
const COMPACT_LINES = 1000;

/** One line of a field map file: a JSON array of `[field, value]` pairs. */
function fieldsLine(fields: ReadonlyArray<readonly [string, unknown]>): string {
  return `[${fields.map(([field, value]) => `[${JSON.stringify(field)},${encodeDoc(value)}]`).join(',')}]`;
}
/** A torn line is at most one putFields call; lines of that size are looked for at the end of a field map. */
const TAIL_SCAN_BYTES = 16 * 1024 * 1024;
const FIELDS = '.fields';

/** encodeURIComponent never writes `%` followed by a non-hex letter, so no plain name starts like this. */
const HASHED_PREFIX = '%h-';

function isHashed(path: string): boolean {
  return basename(path).startsWith(HASHED_PREFIX);
}

/** A document's file content from its JSON: a hashed file keeps the id inside. */
function fileContent(path: string, id: string, json: string): string {
  return isHashed(path) ? `{"id":${JSON.stringify(id)},"doc":${json}}` : json;
}

function unwrap(found: unknown, path: string): { id: string; doc: unknown } {
  if (found !== null && typeof found === 'object' && 'id' in found && typeof found.id === 'string' && 'doc' in found) {
    return { id: found.id, doc: found.doc };
  }
  throw new Error(`corrupt document file ${path}: no id inside a hashed file`);
}

/** The id a document file stands for, or undefined for any file this store did not write. */
function idOf(name: string): string | undefined {
  if (!name.endsWith('.json')) return undefined;
  const stem = name.slice(0, -'.json'.length);
  try {
    const id = decodeURIComponent(stem);
    return encodeURIComponent(id) === stem ? id : undefined;
  } catch {
    return undefined;
  }
}

async function readDoc(path: string): Promise<{ doc: unknown } | undefined> {
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

/**
 * Every complete line of a field map, later ones winning and a null value removing its field; a last line without
 * its newline was cut short.
 */
async function readFields(path: string): Promise<Map<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (hasCode(err, 'ENOENT')) return new Map();
    throw err;
  }
  const fields = new Map<string, unknown>();
  const lines = text.split('\n');
  lines.pop(); // after the last newline: empty, or a line cut short by a crash
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

/** `repair`: a line a crash cut short is cut off first, so the new line does not run on from it. */
async function appendSynced(path: string, line: string, repair: boolean): Promise<void> {
  let file;
  try {
    file = await open(path, 'a+');
  } catch (err) {
    if (!hasCode(err, 'ENOENT')) throw err;
    await mkdir(dirname(path), { recursive: true });
    file = await open(path, 'a+');
  }
  try {
    if (repair) await cutTornTail(file);
    await file.writeFile(line, 'utf8');
    await file.sync();
  } finally {
    await file.close();
  }
}

async function cutTornTail(file: FileHandle): Promise<void> {
  const { size } = await file.stat();
  if (size === 0) return;
  const tail = Buffer.alloc(Math.min(size, TAIL_SCAN_BYTES));
  await file.read(tail, 0, tail.length, size - tail.length);
  const lastNewline = tail.lastIndexOf(0x0a);
  if (lastNewline === tail.length - 1) return;
  if (lastNewline === -1 && tail.length < size) throw new Error('a field map line is longer than can be repaired');
  await file.truncate(size - tail.length + lastNewline + 1);
}

async function writeAtomically(path: string, json: string): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `~${randomBytes(8).toString('hex')}.tmp`);
  try {
    await writeSynced(tmp, json);
  } catch (err) {
    if (!hasCode(err, 'ENOENT')) throw err;
    await mkdir(dir, { recursive: true });
    await writeSynced(tmp, json);
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

async function writeSynced(path: string, data: string): Promise<void> {
  const file = await open(path, 'w');
  try {
    await file.writeFile(data, 'utf8');
    await file.sync();
  } catch (err) {
    await file.close();
    await rm(path, { force: true });
    throw err;
  }
  await file.close();
}

/** Runs at most `slots` tasks at once, the rest in arrival order. */
class Limiter {
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

function hasCode(err: unknown, code: string): boolean {
  return err instanceof Error && 'code' in err && err.code === code;
}

function ignoreCode(code: string): (err: unknown) => void {
  return (err) => {
    if (!hasCode(err, code)) throw err;
  };
}
