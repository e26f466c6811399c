// The node's job runner answering a commit the server sends again (it saw no answer): the ack again once
// committed, nothing while the first is still being checked, busy for another job.
import t from 'tap';
import { JobRunner, type JobAnswer } from '../../src/client/job-runner.js';
import type { Logger } from '../../src/client/logger.js';
import type { Commit } from '../../src/protocol/messages.js';

const quiet: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function commitOf(jobId: string): Commit {
  return {
    type: 'commit',
    org: 'default',
    node: 'n1',
    incarnation_id: '00000000-0000-4000-8000-000000000000',
    sequence: 1,
    timestamp: new Date().toUTCString(),
    job_id: jobId,
    command: 'hello',
    run_timeout: 60,
  };
}

/** A runner whose whitelist answers when `release` is called, so a commit can be held in its checks. */
function runnerOf(fileDir: string) {
  const sent: JobAnswer[] = [];
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  const runner = new JobRunner({
    nodeName: 'n1',
    fileDir,
    log: quiet,
    send: (answer) => sent.push(answer),
    whitelist: async () => {
      await held;
      return new Map([['hello', 'echo hello']]);
    },
    serverOnline: () => true,
    measure: () => 0,
    maxBodySize: () => 65_536,
  });
  return { runner, sent, release };
}

const JOB = 'a'.repeat(32);
const OTHER = 'b'.repeat(32);

t.test('a commit asked again while the first is checked gets one ack, once checked', async (t) => {
  const { runner, sent, release } = runnerOf(t.testdir({}));
  const first = runner.commit(commitOf(JOB));
  await runner.commit(commitOf(JOB));
  t.same(sent, [], 'nothing yet: not busy, the answer follows');
  t.same(runner.jobState(), { job_state: 'idle', job_id: null }, 'heartbeats show no job held until it is acked');
  release();
  await first;
  t.same(sent, [{ type: 'ack_commit', job_id: JOB }]);
});

t.test('a commit asked again once committed is acked again; another job is refused as busy', async (t) => {
  const { runner, sent, release } = runnerOf(t.testdir({}));
  release();
  await runner.commit(commitOf(JOB));
  await runner.commit(commitOf(JOB));
  await runner.commit(commitOf(OTHER));
  t.same(sent, [
    { type: 'ack_commit', job_id: JOB },
    { type: 'ack_commit', job_id: JOB },
    { type: 'nack_commit', job_id: OTHER, reason: 'busy' },
  ]);
  t.same(runner.jobState(), { job_state: 'committed', job_id: JOB });
});
