// The node's one job at a time (reference 7.5): idle -> committed -> running -> idle, answering commit, run
// and abort, enforcing run_timeout itself, and reporting the result with its output fitted to max_body_size.
import { MAX_TEXT_LENGTH } from '../protocol/messages.js';
import { stat } from 'node:fs/promises';
import { realTimers, type Timers } from '../lib/timers.js';
import type {
  Abort,
  ClientJobState,
  ClientMessage,
  Commit,
  Envelope,
  NackCommitReason,
  Run,
} from '../protocol/messages.js';
import { decodeJobFile, removeJobFile, writeJobFile, type FileOwner } from './job-file.js';
import { JobProcess, userIds, type JobCommand, type ProcessResult, type ProcessSpec } from './job-process.js';
import { ProcessRecords } from './process-records.js';
import { errorMessage, type Logger } from './logger.js';
import { fitOutput } from './job-output.js';
import type { Whitelist } from './whitelist-lookup.js';

type WithoutEnvelope<T> = T extends unknown ? Omit<T, keyof Envelope> : never;
/** A message to the server before the connection adds the envelope. */
export type JobAnswer = WithoutEnvelope<Exclude<ClientMessage, { type: 'heartbeat' }>>;

/** SIGTERM first; what is still alive this long after gets SIGKILL. */
export const KILL_GRACE_MS = 3000;

export interface RunnerPorts {
  nodeName: string;
  fileDir: string;
  log: Logger;
  /** Queues a message on the command channel. */
  send(answer: JobAnswer): void;
  /** The whitelist in force now (read for every commit). */
  whitelist(): Promise<Whitelist>;
  /** False while the server's heartbeat is missing: commits are refused (spec 3.3). */
  serverOnline(): boolean;
  /** The encoded size of `answer` with the largest envelope the connection may add, and the body limit. */
  measure(answer: JobAnswer): number;
  maxBodySize(): number;
  /** The run_timeout and the kill grace; Node's timers unless a unit test runs them on a clock of its own. */
  timers?: Timers;
  /** Starts a job's command; a JobProcess unless a unit test stands in for the operating system. */
  startCommand?(spec: ProcessSpec): JobCommand;
}

interface Held {
  commit: Commit;
  phase: 'committing' | 'committed' | 'running';
  commandLine?: string;
  owner?: FileOwner & { home: string | undefined };
  filePath?: string;
  proc?: JobCommand;
  /** Cancels the run_timeout. */
  cancelTimeout?: () => void;
  timedOut: boolean;
  /** Taken by an abort: nothing more is reported for it. */
  ended: boolean;
  /** The process record being written; removed once the command is over. */
  recorded?: Promise<void>;
}

export class JobRunner {
  private held: Held | null = null;
  private readonly records: ProcessRecords;
  private readonly timers: Timers;

  constructor(private readonly ports: RunnerPorts) {
    this.timers = ports.timers ?? realTimers;
    this.records = new ProcessRecords(ports.fileDir, ports.log, this.timers);
  }

  /** Before the first job: stops commands a killed predecessor on this file_dir left running. */
  stopLeftovers(): Promise<string[]> {
    return this.records.stopLeftovers();
  }

  /**
   * For heartbeats. A commit still being checked is not shown: the server reads `committed` with a job it awaits
   * a vote from as the ack, lost on the way, and this one may still end in a nack.
   */
  jobState(): { job_state: ClientJobState; job_id: string | null } {
    const h = this.held;
    if (h === null || h.phase === 'committing') return { job_state: 'idle', job_id: null };
    return { job_state: h.phase === 'running' ? 'running' : 'committed', job_id: h.commit.job_id };
  }

  async commit(m: Commit): Promise<void> {
    const { log, send } = this.ports;
    const current = this.held;
    if (current !== null) {
      // The server asks again when it saw no answer: the ack again once committed; while the commit is still
      // being checked, nothing, as its answer follows.
      if (current.commit.job_id !== m.job_id || current.phase === 'running')
        this.nack(m, 'busy', `busy with job ${current.commit.job_id}`);
      else if (current.phase === 'committed') send({ type: 'ack_commit', job_id: m.job_id });
      return;
    }
    if (!this.ports.serverOnline()) {
      this.nack(m, 'no_server_heartbeat', 'no heartbeat from the server');
      return;
    }
    const h: Held = { commit: m, phase: 'committing', timedOut: false, ended: false };
    this.held = h;
    let refusal: { reason: NackCommitReason; detail: string } | null;
    try {
      refusal = await this.prepare(h);
    } catch (e) {
      refusal = { reason: 'bad_file', detail: errorMessage(e) };
    }
    if (h.ended || this.held !== h) {
      await this.cleanup(h);
      return;
    }
    if (refusal !== null) {
      this.held = null;
      await this.cleanup(h);
      this.nack(m, refusal.reason, refusal.detail);
      return;
    }
    h.phase = 'committed';
    log.info(`job ${m.job_id}: committed to '${m.command}'`);
    send({ type: 'ack_commit', job_id: m.job_id });
  }

  run(m: Run): void {
    const { log, send } = this.ports;
    const h = this.held;
    if (h === null || h.commit.job_id !== m.job_id || h.phase !== 'committed' || h.commandLine === undefined) {
      log.warn(
        `job ${m.job_id}: run refused, ${h === null ? 'no job is committed' : `holding job ${h.commit.job_id} (${h.phase})`}`,
      );
      send({ type: 'nack_run', job_id: m.job_id });
      return;
    }
    const c = h.commit;
    // A job run as another user sees that user's identity, as a login would give it; the job's env still wins.
    const identity: NodeJS.ProcessEnv =
      c.user === undefined ? {} : { USER: c.user, LOGNAME: c.user, ...(h.owner?.home ? { HOME: h.owner.home } : {}) };
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...identity,
      ...c.env,
      PUSH_JOB_ID: c.job_id,
      PUSH_NODE_NAME: this.ports.nodeName,
    };
    if (h.filePath !== undefined) env.PUSH_JOB_FILE = h.filePath;
    else delete env.PUSH_JOB_FILE;
    try {
      h.proc = this.startCommand({
        commandLine: h.commandLine,
        env,
        cwd: c.dir,
        uid: h.owner?.uid,
        gid: h.owner?.gid,
        captureLimit: c.capture === true ? this.ports.maxBodySize() : undefined,
      });
    } catch (e) {
      log.error(`job ${c.job_id}: cannot start '${h.commandLine}': ${errorMessage(e)}`);
      this.held = null;
      void this.cleanup(h);
      send({ type: 'nack_run', job_id: c.job_id });
      return;
    }
    h.phase = 'running';
    const pgid = h.proc.pid;
    log.info(`job ${c.job_id}: running '${h.commandLine}' as process group ${pgid ?? '(not started)'}`);
    if (pgid !== undefined)
      h.recorded = this.records
        .record(pgid, c.job_id)
        .catch((e: unknown) => log.warn(`job ${c.job_id}: cannot record process group ${pgid}: ${errorMessage(e)}`));
    send({ type: 'ack_run', job_id: c.job_id });
    // The client enforces run_timeout too, so the process tree ends even when the server's abort never arrives.
    h.cancelTimeout = this.timers.after(c.run_timeout * 1000, () => {
      h.timedOut = true;
      log.warn(`job ${c.job_id}: run_timeout of ${c.run_timeout} s reached, stopping its process group`);
      void h.proc?.stop(KILL_GRACE_MS);
    });
    void h.proc.done.then((result) => this.finished(h, result));
  }

  /** job_id null (the server's reset of a node) drops whatever is held; a job id drops only that job. */
  async abort(m: Abort): Promise<void> {
    const h = this.held;
    if (h !== null && (m.job_id === null || m.job_id === h.commit.job_id)) {
      this.ports.log.info(`job ${h.commit.job_id}: aborting (${h.phase})`);
      await this.drop(h);
      this.ports.log.info(`job ${h.commit.job_id}: aborted`);
    }
    this.ports.send({ type: 'aborted', job_id: m.job_id });
  }

  /** On shutdown: stops the held job's process group; returns its id so the server can be told. */
  async shutdown(): Promise<string | null> {
    const h = this.held;
    if (h === null) return null;
    this.ports.log.info(`job ${h.commit.job_id}: stopping for shutdown (${h.phase})`);
    await this.drop(h);
    return h.commit.job_id;
  }

  private startCommand(spec: ProcessSpec): JobCommand {
    return this.ports.startCommand?.(spec) ?? new JobProcess(spec, this.timers);
  }

  private nack(m: Commit, reason: NackCommitReason, detail: string): void {
    this.ports.log.info(`job ${m.job_id}: refused '${m.command}' (${reason}): ${detail}`);
    this.ports.send({ type: 'nack_commit', job_id: m.job_id, reason });
  }

  /** The commit checks of reference 7.5, in order; the file is written last so a refusal leaves none. */
  private async prepare(h: Held): Promise<{ reason: NackCommitReason; detail: string } | null> {
    const c = h.commit;
    const commandLine = (await this.ports.whitelist()).get(c.command);
    if (commandLine === undefined)
      return { reason: 'not_whitelisted', detail: `'${c.command}' is not in the whitelist` };
    h.commandLine = commandLine;
    if (c.user !== undefined) {
      const ids = await userIds(c.user);
      if (ids === null) return { reason: 'bad_user', detail: `no user ${c.user}` };
      const self = process.getuid?.();
      if (self !== 0 && self !== ids.uid)
        return { reason: 'bad_user', detail: `running as ${c.user} needs a client running as root` };
      h.owner = ids;
    }
    if (c.dir !== undefined) {
      const info = await stat(c.dir).catch(() => null);
      if (info === null || !info.isDirectory()) return { reason: 'bad_dir', detail: `${c.dir} is not a directory` };
    }
    if (c.file !== undefined) {
      const decoded = decodeJobFile(c.file);
      if (!decoded.ok) return { reason: 'bad_file', detail: decoded.detail };
      try {
        h.filePath = await writeJobFile(this.ports.fileDir, c.job_id, decoded.data, h.owner);
      } catch (e) {
        return {
          reason: 'bad_file',
          detail: `cannot write the job file under ${this.ports.fileDir}: ${errorMessage(e)}`,
        };
      }
    }
    return null;
  }

  private async drop(h: Held): Promise<void> {
    h.ended = true;
    if (this.held === h) this.held = null;
    h.cancelTimeout?.();
    await h.proc?.stop(KILL_GRACE_MS);
    await this.cleanup(h);
  }

  private async cleanup(h: Held): Promise<void> {
    const pgid = h.proc?.pid;
    if (h.recorded !== undefined && pgid !== undefined) {
      await h.recorded;
      await this.records
        .forget(pgid)
        .catch((e: unknown) => this.ports.log.warn(`cannot remove the record of group ${pgid}: ${errorMessage(e)}`));
    }
    if (h.filePath === undefined) return;
    await removeJobFile(h.filePath).catch((e: unknown) =>
      this.ports.log.warn(`cannot remove ${h.filePath}: ${errorMessage(e)}`),
    );
  }

  private async finished(h: Held, r: ProcessResult): Promise<void> {
    h.cancelTimeout?.();
    if (h.ended) return;
    if (this.held === h) this.held = null;
    await this.cleanup(h);
    const c = h.commit;
    const succeeded = r.exitStatus === 0 && !h.timedOut;
    const how =
      r.error !== undefined
        ? `could not start: ${r.error}`
        : h.timedOut
          ? 'stopped by run_timeout'
          : r.signal !== null
            ? `killed by ${r.signal}`
            : `exit status ${r.exitStatus ?? 'none'}`;
    this.ports.log.info(`job ${c.job_id}: ${succeeded ? 'succeeded' : 'failed'} (${how})`);
    const base = { type: succeeded ? 'succeeded' : 'failed', job_id: c.job_id, exit_status: r.exitStatus } as const;
    if (c.capture !== true) {
      this.ports.send(base);
      return;
    }
    const out = r.output ?? { stdout: '', stderr: '', cut: false };
    const budget = this.ports.maxBodySize() - this.ports.measure({ ...base, stdout: '', stderr: '', truncated: true });
    const fitted = fitOutput(out.stdout, out.stderr, budget, MAX_TEXT_LENGTH, out.cut);
    if (fitted.truncated)
      this.ports.log.warn(`job ${c.job_id}: output cut to fit max_body_size (${this.ports.maxBodySize()} bytes)`);
    this.ports.send({ ...base, ...fitted });
  }
}
