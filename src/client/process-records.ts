// Each running command's process group, written under file_dir while it runs. A client killed with -9 cannot
// stop its command; the next client on the same file_dir finds the record and stops the group before it takes
// any job, so a restart never leaves the old command running beside a new one (the original did, reference 11).
import { mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { realTimers, type Timers } from '../lib/timers.js';
import { groupAlive, stopGroup } from './job-process.js';
import type { Logger } from './logger.js';

const recordSchema = z.object({
  pgid: z.int().positive(),
  job_id: z.string(),
  started_at: z.string(),
  /** The kernel's boot id and the group leader's start time: a pid reused since is not ours to kill. */
  boot_id: z.string(),
  leader_start: z.string(),
});
type ProcessRecord = z.infer<typeof recordSchema>;

/** The suffix of a record being written. */
const PARTIAL = '.partial';

/** Leftovers get this long after SIGTERM before SIGKILL. */
const LEFTOVER_GRACE_MS = 3000;

export class ProcessRecords {
  private readonly dir: string;

  constructor(
    fileDir: string,
    private readonly log: Logger,
    private readonly timers: Timers = realTimers,
  ) {
    this.dir = join(fileDir, 'running');
  }

  private file(pgid: number): string {
    return join(this.dir, `${pgid}.json`);
  }

  async record(pgid: number, jobId: string): Promise<void> {
    const [boot, leader] = await Promise.all([bootId(), readStat(pgid)]);
    // Without /proc (not Linux) a record could not tell our group from a stranger's later: none is kept.
    if (boot === null || leader === null) return;
    const entry: ProcessRecord = {
      pgid,
      job_id: jobId,
      started_at: new Date().toISOString(),
      boot_id: boot,
      leader_start: leader.start,
    };
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    // Written aside and renamed: a client killed mid-write must not leave a half record, which the next client
    // could not read and whose command it would then leave running.
    const partial = `${this.file(pgid)}${PARTIAL}`;
    await writeFile(partial, JSON.stringify(entry), { mode: 0o600 });
    await rename(partial, this.file(pgid));
  }

  /** Removes the record, and the folder once empty, so a finished job leaves file_dir as it found it. */
  async forget(pgid: number): Promise<void> {
    await rm(this.file(pgid), { force: true });
    await rmdir(this.dir).catch(() => undefined);
  }

  /** Stops every recorded group still alive and removes every record; returns the job ids it stopped. */
  async stopLeftovers(): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const stopped: string[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      const path = join(this.dir, name);
      const entry = recordSchema.safeParse(await readJson(path));
      if (entry.success && (await stillOurs(entry.data))) {
        const { pgid, job_id } = entry.data;
        this.log.warn(`job ${job_id}: its command (process group ${pgid}) outlived a previous client; stopping it`);
        await stopGroup(pgid, LEFTOVER_GRACE_MS, this.timers);
        stopped.push(job_id);
      } else if (!entry.success) this.log.warn(`ignoring unreadable process record ${path}`);
      await rm(path, { force: true });
    }
    // Records a killed client never finished writing: their command had only just started (see `record`).
    for (const name of names.filter((n) => n.endsWith(PARTIAL))) await rm(join(this.dir, name), { force: true });
    await rmdir(this.dir).catch(() => undefined);
    return stopped;
  }
}

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Whether the recorded group is the one the earlier client started: same boot, and its leader is the same
 * process or gone. A group outlives its leader, and while it lives no new process can take its id.
 */
async function stillOurs(r: ProcessRecord): Promise<boolean> {
  if (!groupAlive(r.pgid) || (await bootId()) !== r.boot_id || !(await runsAnything(r.pgid))) return false;
  const leader = await readStat(r.pgid);
  return leader === null || leader.start === r.leader_start;
}

/** Whether a process of group `pgid` still runs: zombies waiting for init to reap them do not count. */
async function runsAnything(pgid: number): Promise<boolean> {
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((n) => /^\d+$/.test(n));
  for (const pid of pids) {
    const stat = await readStat(Number(pid));
    if (stat !== null && stat.pgrp === pgid && stat.state !== 'Z') return true;
  }
  return false;
}

async function bootId(): Promise<string | null> {
  return readFile('/proc/sys/kernel/random/boot_id', 'utf8').then(
    (t) => t.trim(),
    () => null,
  );
}

/**
 * State, process group and start time (clock ticks since boot) from /proc/PID/stat, fields 3, 5 and 22; the
 * command name before them may hold spaces and parentheses.
 */
async function readStat(pid: number): Promise<{ state: string; pgrp: number; start: string } | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [state, pgrp, start] = [fields[0], fields[2], fields[19]];
  return state === undefined || pgrp === undefined || start === undefined ? null : { state, pgrp: Number(pgrp), start };
}
