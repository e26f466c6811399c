// One job's command as an operating-system process: `/bin/sh -c` in its own process group, its output
// collected when asked, and the whole group stopped on abort or timeout (the original killed only a thread,
// reference 5.6 and 11).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { hasCode } from '../lib/thrown.js';
import { delay, realTimers, type Timers } from '../lib/timers.js';
import { OutputCollector } from './job-output.js';

export interface ProcessSpec {
  commandLine: string;
  env: NodeJS.ProcessEnv;
  cwd?: string;
  uid?: number;
  gid?: number;
  /** Bytes kept per stream when capturing; undefined means output is not captured. */
  captureLimit?: number;
}

export interface ProcessResult {
  /** The exit code, or null when a signal ended the process or it never started. */
  exitStatus: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started. */
  error?: string;
  output?: { stdout: string; stderr: string; cut: boolean };
}

/** After the shell exits, output still held open by its background children is read this long, no longer. */
const STDIO_DRAIN_MS = 1000;
const POLL_MS = 50;

const run = promisify(execFile);

/**
 * The uid, gid and home folder of a user from the system's passwd (through `id` and `getent`, so NSS sources
 * count); null if unknown. The home folder is undefined where getent is missing.
 */
export async function userIds(user: string): Promise<{ uid: number; gid: number; home: string | undefined } | null> {
  if (user.startsWith('-')) return null;
  try {
    const [u, g] = await Promise.all([run('id', ['-u', user]), run('id', ['-g', user])]);
    const uid = Number(u.stdout.trim());
    const gid = Number(g.stdout.trim());
    if (!Number.isInteger(uid) || !Number.isInteger(gid) || u.stdout.trim() === '' || g.stdout.trim() === '')
      return null;
    const entry = await run('getent', ['passwd', user]).catch(() => null);
    const home = entry?.stdout.trim().split(':')[5];
    return { uid, gid, home: home === undefined || home === '' ? undefined : home };
  } catch {
    return null;
  }
}

/** Whether any process of group `pgid` exists (zombies included). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return hasCode(e, 'EPERM');
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is gone already.
  }
}

/** How stopGroup reaches a process group: through the kernel, unless a unit test stands in for it. */
export interface GroupControl {
  alive(pgid: number): boolean;
  signal(pgid: number, signal: NodeJS.Signals): void;
}

const kernelGroups: GroupControl = { alive: groupAlive, signal: signalGroup };

/** SIGTERM to the group, SIGKILL to whatever is left after `graceMs`. */
export async function stopGroup(
  pgid: number,
  graceMs: number,
  timers: Timers = realTimers,
  groups: GroupControl = kernelGroups,
): Promise<void> {
  groups.signal(pgid, 'SIGTERM');
  const deadline = timers.now() + graceMs;
  // Not unref'd: at start-up, stopping a leftover is all that keeps the client's event loop alive.
  while (groups.alive(pgid) && timers.now() < deadline) await delay(timers, POLL_MS);
  if (groups.alive(pgid)) groups.signal(pgid, 'SIGKILL');
}

/**
 * Linux's setpriv asks the kernel to SIGKILL the command if the client dies first (PR_SET_PDEATHSIG); it is
 * kept across exec, so `/bin/sh -c 'sleep 31'` (which execs sleep) dies with the client. Children of a longer
 * script survive it; the client stops those from the process record when it starts again.
 */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

function shellCommand(commandLine: string): [string, string[]] {
  const shell: [string, string[]] = ['/bin/sh', ['-c', commandLine]];
  return SETPRIV === undefined ? shell : [SETPRIV, ['--pdeathsig', 'KILL', '--', shell[0], ...shell[1]]];
}

/** What a job runner needs of a running command: a JobProcess, or what a unit test gives it instead. */
export type JobCommand = Pick<JobProcess, 'pid' | 'done' | 'stop'>;

export class JobProcess {
  readonly done: Promise<ProcessResult>;
  private readonly child: ChildProcess;
  private stopping: Promise<void> | undefined;

  constructor(
    spec: ProcessSpec,
    private readonly timers: Timers = realTimers,
  ) {
    const capture = spec.captureLimit !== undefined;
    // detached: setsid() makes the shell the leader of a new process group, so signals reach every descendant.
    const [file, args] = shellCommand(spec.commandLine);
    this.child = spawn(file, args, {
      cwd: spec.cwd,
      env: spec.env,
      uid: spec.uid,
      gid: spec.gid,
      detached: true,
      stdio: ['ignore', capture ? 'pipe' : 'ignore', capture ? 'pipe' : 'ignore'],
    });
    const out = capture ? new OutputCollector(spec.captureLimit ?? 0) : undefined;
    const err = capture ? new OutputCollector(spec.captureLimit ?? 0) : undefined;
    if (out !== undefined) this.child.stdout?.on('data', (c: Buffer) => out.push(c));
    if (err !== undefined) this.child.stderr?.on('data', (c: Buffer) => err.push(c));
    this.done = new Promise((resolve) => {
      const finish = (r: ProcessResult) => {
        if (out !== undefined && err !== undefined)
          r.output = { stdout: out.text(), stderr: err.text(), cut: out.overflowed || err.overflowed };
        resolve(r);
      };
      this.child.once('error', (e) => {
        // Without a pid the process never ran (bad cwd or uid, missing shell) and no 'exit' follows.
        if (this.child.pid === undefined) finish({ exitStatus: null, signal: null, error: e.message });
      });
      this.child.once('exit', (code, signal) => {
        const closed = new Promise<void>((r) => this.child.once('close', () => r()));
        const drained = new Promise<void>((r) => this.timers.after(STDIO_DRAIN_MS, r, { unref: true }));
        void Promise.race([closed, drained]).then(() => {
          this.child.stdout?.destroy();
          this.child.stderr?.destroy();
          finish({ exitStatus: code, signal });
        });
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * SIGTERM to the whole group, SIGKILL to whatever is left after `graceMs`; resolves once the group is gone
   * (or, for zombies nobody reaps, once SIGKILL was sent) and the shell's exit is known.
   */
  stop(graceMs: number): Promise<void> {
    this.stopping ??= this.kill(graceMs);
    return this.stopping;
  }

  private async kill(graceMs: number): Promise<void> {
    const pgid = this.child.pid;
    if (pgid === undefined) return;
    await stopGroup(pgid, graceMs, this.timers);
    await this.done;
  }
}
