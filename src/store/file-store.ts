// FileStore: the persistence port over plain files, one JSON file per document, for servers without Redis.
import { createHash, randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { access, constants, mkdir, open, readdir, readFile, rename, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import { checkCollection, encodeDoc } from './keys.js';
import type { CollectionName, Store, StoreState } from './store.js';

/** Longest file name most file systems accept, in bytes. */
const NAME_MAX = 255;
/** Open files at once; keeps a 10,000-document load or putMany under the usual descriptor limit. */
const IO_SLOTS = 64;

/**
 * Layout: `<root>/<collection path>/<encodeURIComponent(id)>.json`. Temporary files are named
 * `~<random>.tmp`: never `.json`, so load skips them, and `~` never starts a collection folder.
 */
export class FileStore implements Store {
  readonly kind = 'file' as const;
  readonly #io = new Limiter(IO_SLOTS);
  /** Last queued write per document file: writes to one file run in call order, so the last put wins. */
  readonly #tails = new Map<string, Promise<void>>();
  /** Settles when every drop asked for so far is done; writes queued later wait for it. */
  #barrier: Promise<void> = Promise.resolve();

  constructor(readonly root: string) {}

  /** Reads every `*.json` file of the collection's folder; a missing folder is an empty map. */
  async load(collection: CollectionName): Promise<Map<string, unknown>> {
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
    const path = this.#path(collection, id);
    const found = await this.#io.run(() => readDoc(path));
    if (found === undefined) return undefined;
    return isHashed(path) ? unwrap(found.doc, path).doc : found.doc;
  }

  /** Writes `<collection>/<id>.json` through a temporary file, fsync and rename. */
  async put(collection: CollectionName, id: string, doc: unknown): Promise<void> {
    const path = this.#path(collection, id);
    const json = encodeFor(path, id, doc);
    return this.#enqueue(path, () => writeAtomically(path, json));
  }

  /** One atomic file write per document, at most IO_SLOTS at a time. */
  async putMany(collection: CollectionName, docs: ReadonlyArray<readonly [string, unknown]>): Promise<void> {
    const files = docs.map(([id, doc]) => {
      const path = this.#path(collection, id);
      return { path, json: encodeFor(path, id, doc) };
    });
    await Promise.all(files.map(({ path, json }) => this.#enqueue(path, () => writeAtomically(path, json))));
  }

  /** Deletes `<collection>/<id>.json` after any write to it queued before. */
  async remove(collection: CollectionName, id: string): Promise<void> {
    const path = this.#path(collection, id);
    return this.#enqueue(path, () => unlink(path).catch(ignoreCode('ENOENT')));
  }

  /** Deletes the collection's folder tree once the writes queued into it have landed. */
  async drop(collection: CollectionName): Promise<void> {
    checkCollection(collection);
    const dir = join(this.root, collection);
    const inside = [...this.#tails].filter(([path]) => path.startsWith(dir + sep)).map(([, tail]) => tail);
    const done = Promise.all([this.#barrier, ...inside]).then(() =>
      rm(dir, { recursive: true, force: true }),
    );
    this.#barrier = done.catch(() => undefined);
    return done;
  }

  /** `ok` when the root folder exists (or can be created) and is writable. */
  async state(): Promise<StoreState> {
    try {
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

  #path(collection: CollectionName, id: string): string {
    checkCollection(collection);
    const plain = `${encodeURIComponent(id)}.json`;
    // An id too long for a file name is stored under its hash, with the id kept inside the file.
    const name = Buffer.byteLength(plain) > NAME_MAX ? `${HASHED_PREFIX}${createHash('sha256').update(id).digest('hex')}.json` : plain;
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

/** encodeURIComponent never writes `%` followed by a non-hex letter, so no plain name starts like this. */
const HASHED_PREFIX = '%h-';

function isHashed(path: string): boolean {
  return basename(path).startsWith(HASHED_PREFIX);
}

function encodeFor(path: string, id: string, doc: unknown): string {
  return isHashed(path) ? `{"id":${JSON.stringify(id)},"doc":${encodeDoc(doc)}}` : encodeDoc(doc);
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
