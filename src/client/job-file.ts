// A job's file (reference 7.5): `raw:` or `base64:` content from the commit, written under file_dir with mode
// 0600 for the job's user, named to the job in PUSH_JOB_FILE, and removed when the job ends.
import { randomBytes } from 'node:crypto';
import { chmod, chown, lstat, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export type DecodedFile = { ok: true; data: Buffer } | { ok: false; detail: string };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes a commit's `file` names; base64 must be canonical (whitespace aside), never silently skipped. */
export function decodeJobFile(spec: string): DecodedFile {
  if (spec.startsWith('raw:')) return { ok: true, data: Buffer.from(spec.slice('raw:'.length), 'utf8') };
  if (spec.startsWith('base64:')) {
    const text = spec.slice('base64:'.length).replace(/\s+/g, '');
    if (!BASE64.test(text)) return { ok: false, detail: 'the base64: content is not valid base64' };
    return { ok: true, data: Buffer.from(text, 'base64') };
  }
  return { ok: false, detail: 'the file must start with raw: or base64:' };
}

export interface FileOwner {
  uid: number;
  gid: number;
}

/**
 * Makes `dir` if needed (mode 0711: a job's user may open its own file by name but not list the others) and
 * refuses a folder that is a symbolic link or belongs to someone else, since the default lives under /tmp.
 */
async function ensureFileDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o711 });
  const info = await lstat(dir);
  if (!info.isDirectory()) throw new Error(`${dir} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) throw new Error(`${dir} belongs to uid ${info.uid}, not to this client`);
}

/** Writes the job's file and returns its path; the job id goes into the name, made safe for a file name. */
export async function writeJobFile(dir: string, jobId: string, data: Buffer, owner?: FileOwner): Promise<string> {
  await ensureFileDir(dir);
  const path = join(dir, `push-job-${jobId.replace(/[^A-Za-z0-9_-]/g, '_')}-${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(path, data, { mode: 0o600, flag: 'wx' });
    await chmod(path, 0o600);
    if (owner !== undefined) await chown(path, owner.uid, owner.gid);
  } catch (e) {
    await rm(path, { force: true });
    throw e;
  }
  return path;
}

export async function removeJobFile(path: string): Promise<void> {
  await rm(path, { force: true });
}
