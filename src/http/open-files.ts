// The process's open-file limit, and how many files it holds: node connections (two per node), API connections
// and event feeds share them, so the API is refused before the last ones go (see connection-budget.ts).
import { execFileSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';

export interface FileLimits {
  /** The soft limit in force: opening more fails with EMFILE. 0 where it cannot be read (no /proc). */
  soft: number;
  /** The most the soft limit can be raised to without privileges; null when unlimited or unknown. */
  hard: number | null;
}

/** `Max open files  SOFT  HARD  files` of /proc/self/limits. */
export function readFileLimits(text?: string): FileLimits {
  let limits = text;
  try {
    limits ??= readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return { soft: 0, hard: null };
  }
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(limits);
  const value = (v: string | undefined) => (v === undefined || !/^\d+$/.test(v) ? null : Number(v));
  return { soft: value(m?.[1]) ?? 0, hard: value(m?.[2]) };
}

/**
 * Raises the soft limit to the hard one. Node does so itself as it starts (on Linux and the BSDs), so this acts only
 * where that did not happen; Node has no setrlimit, so it asks util-linux's prlimit(1) to set this process's limit,
 * which an unprivileged process may do up to its hard limit. Returns the limits in force afterwards, and why they
 * stay below the hard limit, if they do.
 */
export function raiseFileLimit(): FileLimits & { failure?: string } {
  const before = readFileLimits();
  if (before.hard === null || before.soft >= before.hard) return before;
  try {
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${before.hard}:${before.hard}`], {
      stdio: 'ignore',
      timeout: 5000,
    });
  } catch (e) {
    return { ...before, failure: `prlimit failed: ${(e as Error).message}` };
  }
  return readFileLimits();
}

/** How many files the process holds, read from /proc/self/fd; undefined where it cannot be read. */
export async function countOpenFiles(): Promise<number | undefined> {
  try {
    // One entry is the folder being read itself.
    return (await readdir('/proc/self/fd')).length - 1;
  } catch {
    return undefined;
  }
}
