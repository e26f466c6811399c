// The file store's worker thread: makes file operations one after another, in the order they were posted, with
// plain synchronous calls that block only this thread. See file-thread.ts for why.
import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, sep } from 'node:path';
import { parentPort } from 'node:worker_threads';
import { hasCode, messageOf } from '../lib/thrown.js';
import { foldFieldLines, type FileOp, type FileThreadReply, type FileThreadRequest } from './file-ops.js';

/** Lines appended to each field map since this thread first touched it or last compacted it. */
const appended = new Map<string, number>();

parentPort?.on('message', ({ id, ops }: FileThreadRequest) => {
  let error: string | null = null;
  for (const op of ops) {
    try {
      perform(op);
    } catch (err) {
      // The other operations go on: each stands for a change already logged.
      error ??= messageOf(err);
    }
  }
  const reply: FileThreadReply = { id, error };
  parentPort?.postMessage(reply);
});

function perform(op: FileOp): void {
  switch (op.op) {
    case 'replace':
      return replaceFile(op.path, op.content, false);
    case 'append':
      return appendLine(op.path, op.line, op.compactEvery);
    case 'remove':
      appended.delete(op.path);
      return removeFile(op.path);
    case 'drop':
      forget(op.path);
      return rmSync(op.path, { recursive: true, force: true });
    case 'forget':
      return forget(op.path);
    case 'sync':
      return syncPath(op.path);
  }
}

function forget(folder: string): void {
  for (const path of appended.keys()) if (path.startsWith(folder + sep)) appended.delete(path);
}

/** Through a temporary file and a rename, so a reader sees the old or the new content; `sync`: before the rename. */
function replaceFile(path: string, content: string, sync: boolean): void {
  const tmp = join(dirname(path), `~${randomBytes(8).toString('hex')}.tmp`);
  const fd = openMakingFolder(tmp, 'w');
  try {
    writeFileSync(fd, content);
    if (sync) fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Opens a file, making its folder first when there is none (a collection's first document). */
function openMakingFolder(path: string, flags: string): number {
  try {
    return openSync(path, flags);
  } catch (err) {
    if (!hasCode(err, 'ENOENT')) throw err;
    mkdirSync(dirname(path), { recursive: true });
    return openSync(path, flags);
  }
}

function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if (!hasCode(err, 'ENOENT')) throw err;
  }
}

/**
 * Appends one line to a field map. The first append this thread makes to a file cuts off a line a crash left
 * cut short, so the new line does not run on from it; every `compactEvery` lines the file is rewritten as one line,
 * so a map written forever (node states) stays the size of what it holds.
 */
function appendLine(path: string, line: string, compactEvery: number): void {
  const count = appended.get(path);
  const fd = openMakingFolder(path, 'a+');
  try {
    if (count === undefined) cutTornTail(fd);
    writeFileSync(fd, line);
  } finally {
    closeSync(fd);
  }
  const next = (count ?? 0) + 1;
  if (next < compactEvery) {
    appended.set(path, next);
    return;
  }
  appended.set(path, 0);
  // Synced before the rename: the compacted file stands for lines whose log may be gone. A failure only leaves the
  // file long.
  try {
    replaceFile(path, `${foldFieldLines(readFileSync(path, 'utf8'), path)}\n`, true);
  } catch {
    // the lines are all still there
  }
}

/** A torn line is at most one putFields call; lines of that size are looked for at the end of a field map. */
const TAIL_SCAN_BYTES = 16 * 1024 * 1024;

function cutTornTail(fd: number): void {
  const { size } = fstatSync(fd);
  if (size === 0) return;
  const tail = Buffer.alloc(Math.min(size, TAIL_SCAN_BYTES));
  readSync(fd, tail, 0, tail.length, size - tail.length);
  const lastNewline = tail.lastIndexOf(0x0a);
  if (lastNewline === tail.length - 1) return;
  if (lastNewline === -1 && tail.length < size) throw new Error('a field map line is longer than can be repaired');
  ftruncateSync(fd, size - tail.length + lastNewline + 1);
}

/** A file or folder that is gone has nothing left to sync. */
function syncPath(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if (hasCode(err, 'ENOENT')) return;
    throw err;
  }
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
