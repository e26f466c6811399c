// Handing a new private key to the user: on stdout, or into a file only its owner can read (spec 2.1).
import { constants } from 'node:fs';
import { access, open, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { messageOf } from '../../lib/thrown.js';
import { CommandError, type Ui } from '../terminal.js';

/**
 * Checked before the server creates anything: the server never shows a private key twice, so a key that
 * cannot be written is a key lost.
 */
export async function checkKeyFile(file: string): Promise<void> {
  const path = resolve(file);
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory() === true) throw CommandError.usage(`${file} is a directory, not a key file`);
  try {
    await access(existing === undefined ? dirname(path) : path, constants.W_OK);
  } catch (e) {
    const what = existing === undefined ? `the folder ${dirname(path)}` : file;
    throw new CommandError(`cannot write ${file}: ${what} is missing or not writable`, [], 1, { cause: e });
  }
}

/** Writes `pem` to `file` with mode 0600, or to stdout without a file. If the write fails, stdout gets the key. */
export async function deliverKey(ui: Ui, pem: string, file: string | undefined, what: string): Promise<void> {
  const text = pem.endsWith('\n') ? pem : `${pem}\n`;
  if (file === undefined) {
    ui.raw(text);
    return;
  }
  try {
    const handle = await open(file, 'w', 0o600);
    try {
      // The mode applies only to a new file: narrow an existing one before the key is in it.
      await handle.chmod(0o600);
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
  } catch (e) {
    ui.raw(text);
    const why = messageOf(e);
    throw new CommandError(`cannot write ${what} to ${file} (${why}); the key was printed on stdout instead`, [], 1, {
      cause: e,
    });
  }
}
