// Where a file store keeps what: `<root>/<collection path>/<encodeURIComponent(id)>.json` for a document and
// `.fields` for a field map, an id too long for a file name under its hash (the document keeps its id inside), and
// the id a file stands for read back from its name. Temporary files are named `~<random>.tmp`: never `.json`, so
// a load skips them, and `~` never starts a collection folder, nor the write log's.
import { createHash } from 'node:crypto';
import { basename, join } from 'node:path';
import { checkCollection } from './layout.js';
import type { CollectionName } from './store.js';

export const DOCUMENT = '.json';
export const FIELDS = '.fields';
/** The write log's folder: `~` never starts a collection folder. */
export const JOURNAL_DIR = '~journal';

/** Longest file name most file systems accept, in bytes. */
const NAME_MAX = 255;
/** encodeURIComponent never writes `%` followed by a non-hex letter, so no plain name starts like this. */
const HASHED_PREFIX = '%h-';

/** The file of a document (or, with FIELDS, a field map) under `root`. */
export function pathIn(root: string, collection: CollectionName, id: string, extension = DOCUMENT): string {
  checkCollection(collection);
  const plain = `${encodeURIComponent(id)}${extension}`;
  // An id too long for a file name is stored under its hash; a document keeps its id inside the file.
  const name =
    Buffer.byteLength(plain) > NAME_MAX
      ? `${HASHED_PREFIX}${createHash('sha256').update(id).digest('hex')}${extension}`
      : plain;
  return join(root, collection, name);
}

/** What a file in a collection's folder holds: a document of this id, a document under its hash, or neither. */
export function documentFile(name: string): { id: string } | 'hashed' | undefined {
  if (name.startsWith(HASHED_PREFIX) && name.endsWith(DOCUMENT)) return 'hashed';
  const id = idOf(name);
  return id === undefined ? undefined : { id };
}

export function isHashed(path: string): boolean {
  return basename(path).startsWith(HASHED_PREFIX);
}

/** A document's file content from its JSON: a hashed file keeps the id inside. */
export function fileContent(path: string, id: string, json: string): string {
  return isHashed(path) ? `{"id":${JSON.stringify(id)},"doc":${json}}` : json;
}

/** The id and document a hashed file holds. */
export function unwrap(found: unknown, path: string): { id: string; doc: unknown } {
  if (found !== null && typeof found === 'object' && 'id' in found && typeof found.id === 'string' && 'doc' in found) {
    return { id: found.id, doc: found.doc };
  }
  throw new Error(`corrupt document file ${path}: no id inside a hashed file`);
}

/** The id a document file stands for, or undefined for any file this store did not write. */
function idOf(name: string): string | undefined {
  if (!name.endsWith(DOCUMENT)) return undefined;
  const stem = name.slice(0, -DOCUMENT.length);
  try {
    const id = decodeURIComponent(stem);
    return encodeURIComponent(id) === stem ? id : undefined;
  } catch {
    return undefined;
  }
}
