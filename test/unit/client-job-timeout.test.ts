// A job's run_timeout and the kill grace, on a manual clock: once run_timeout is up the client stops the command's
// process group itself, SIGTERM first and SIGKILL for what is left 3 s later, and reports the job failed; an abort
// stops it the same way; a command that ends in time is never signalled. The process group is a stand-in that
// records the signals it gets; test/e2e/push-jobs-client.test.ts stops real process trees.
import t from 'tap';
import { stopGroup, type GroupControl, type JobCommand, type ProcessResult } from '../../src/client/job-process.js';
import { JobRunner, KILL_GRACE_MS, type JobAnswer } from '../../src/client/job-runner.js';
import type { Logger } from '../../src/client/logger.js';
import type { Commit } from '../../src/protocol/messages.js';
import { ManualClock } from '../support/manual-clock.js';

const JOB = 'a'.repeat(32);
/** Beyond any pid the kernel hands out, so no process record is kept for it. */
const PGID = 2 ** 30;
const envelope = {
  org: 'default',
  node: 'n1',
  incarnation_id: '00000000-0000-4000-8000-000000000000',
  sequence: 1,
  timestamp: new Date(0).toUTCString(),
};
const commit: Commit = { type: 'commit', ...envelope, job_id: JOB, command: 'slow', run_timeout: 10 };

/**
 * A runner whose command is a process group that ends at SIGKILL, and at SIGTERM unless `ignoresTerm`; `signals`
 * says when each came, `sent` what the runner reported and when.
 */
function runnerOf(fileDir: string, o: { ignoresTerm: boolean }) {
  const clock = new ManualClock();
  const lines: string[] = [];
  const log: Logger = { debug: () => {}, info: (l) => lines.push(l), warn: (l) => lines.push(l), error: () => {} };
  const signals: string[] = [];
  const sent: string[] = [];
  let end: (r: ProcessResult) => void = () => {};
  const done = new Promise<ProcessResult>((resolve) => (end = resolve));
  let alive = true;
  const group: GroupControl = {
    alive: () => alive,
    signal: (_pgid, signal) => {
      signals.push(`${clock.now()} ${signal}`);
      if (signal === 'SIGTERM' && o.ignoresTerm) return;
      alive = false;
      end({ exitStatus: null, signal });
    },
  };
  // As a JobProcess stops: the group, then the shell's exit.
  const command: JobCommand = {
    pid: PGID,
    done,
    stop: async (graceMs) => {
      await stopGroup(PGID, graceMs, clock, group);
      await done;
    },
  };
  let reported: (answer: JobAnswer) => void = () => {};
  const result = new Promise<JobAnswer>((resolve) => (reported = resolve));
  const runner = new JobRunner({
    nodeName: 'n1',
    fileDir,
    log,
    send: (answer) => {
      sent.push(`${clock.now()} ${answer.type}`);
      if (answer.type === 'succeeded' || answer.type === 'failed' || answer.type === 'aborted') reported(answer);
    },
    whitelist: async () => new Map([['slow', 'sleep 600']]),
    serverOnline: () => true,
    measure: () => 0,
    maxBodySize: () => 65_536,
    timers: clock,
    startCommand: () => command,
  });
  /** Commits and runs the job, as the server asks. */
  const start = async () => {
    await runner.commit(commit);
    runner.run({ type: 'run', ...envelope, job_id: JOB });
  };
  /** The command exits by itself. */
  const exit = (exitStatus: number) => {
    alive = false;
    end({ exitStatus, signal: null });
  };
  return { clock, lines, signals, sent, runner, start, exit, result };
}

t.test('run_timeout stops a command that ignores SIGTERM with SIGKILL after the kill grace', async (t) => {
  const { clock, lines, signals, sent, start, result } = runnerOf(t.testdir({}), { ignoresTerm: true });
  await start();
  t.same(sent, ['0 ack_commit', '0 ack_run']);
  await clock.advance(commit.run_timeout * 1000 - 1);
  t.same(signals, [], 'not a moment before run_timeout');
  await clock.advance(1);
  t.same(signals, ['10000 SIGTERM']);
  await clock.advance(KILL_GRACE_MS - 1);
  t.same(signals, ['10000 SIGTERM'], 'the grace is not cut short');
  await clock.advance(1);
  t.same(signals, ['10000 SIGTERM', '13000 SIGKILL']);
  t.same(await result, { type: 'failed', job_id: JOB, exit_status: null });
  t.ok(lines.includes(`job ${JOB}: failed (stopped by run_timeout)`));
  t.equal(clock.pending, 0);
});

t.test('a command that ends at SIGTERM is not killed', async (t) => {
  const { clock, signals, start, result } = runnerOf(t.testdir({}), { ignoresTerm: false });
  await start();
  await clock.advance(20_000);
  t.same(signals, ['10000 SIGTERM']);
  t.same(await result, { type: 'failed', job_id: JOB, exit_status: null });
  t.equal(clock.pending, 0);
});

t.test('a command that ends before run_timeout is never signalled', async (t) => {
  const { clock, signals, start, exit, result } = runnerOf(t.testdir({}), { ignoresTerm: true });
  await start();
  await clock.advance(9000);
  exit(0);
  t.same(await result, { type: 'succeeded', job_id: JOB, exit_status: 0 });
  t.equal(clock.pending, 0, 'its run_timeout is cancelled');
  await clock.advance(60_000);
  t.same(signals, []);
});

t.test('an abort stops the command the same way, and is answered once the group is gone', async (t) => {
  const { clock, signals, sent, runner, start, result } = runnerOf(t.testdir({}), { ignoresTerm: true });
  await start();
  await clock.advance(2000);
  const aborted = runner.abort({ type: 'abort', ...envelope, job_id: JOB });
  await clock.advance(KILL_GRACE_MS);
  await aborted;
  t.same(signals, ['2000 SIGTERM', '5000 SIGKILL']);
  t.same(await result, { type: 'aborted', job_id: JOB });
  t.same(sent, ['0 ack_commit', '0 ack_run', '5000 aborted'], 'no result of its own for an aborted job');
  await clock.advance(60_000);
  t.equal(signals.length, 2, 'its run_timeout is cancelled');
});
