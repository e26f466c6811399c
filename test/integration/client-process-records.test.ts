// The records of running commands under file_dir, with real process groups: a record is whole or absent, and the
// next client stops what a record names and clears what a killed client left half written.
import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { createLogger } from '../../src/client/logger.js';
import { ProcessRecords } from '../../src/client/process-records.js';
import { until } from '../support/deadline.js';
import { processGone } from '../support/node-fleet.js';

/** A detached `sleep` leading a process group of its own, as the client starts commands. */
function sleeper(t: Test): number {
  const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
  const pid = child.pid;
  if (pid === undefined) throw new Error('sleep did not start');
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return pid;
}

function records(dir: string): ProcessRecords {
  return new ProcessRecords(dir, createLogger('error', { stream: 'stderr' }));
}

t.test('a record is written whole under running/, and only the finished name is left', async (t) => {
  const dir = t.testdir({});
  const pgid = sleeper(t);
  await records(dir).record(pgid, 'job-1');
  t.same(await readdir(join(dir, 'running')), [`${pgid}.json`], 'no partial file is left beside it');
  const entry: unknown = JSON.parse(await readFile(join(dir, 'running', `${pgid}.json`), 'utf8'));
  t.match(entry, { pgid, job_id: 'job-1' });
});

t.test('the next client stops a recorded group and clears a record a killed client left half written', async (t) => {
  const dir = t.testdir({});
  const pgid = sleeper(t);
  await records(dir).record(pgid, 'job-2');
  const halfWritten = join(dir, 'running', '4242.json.partial');
  await writeFile(halfWritten, '{"pgid":42');
  t.same(await records(dir).stopLeftovers(), ['job-2'], 'the recorded job is stopped');
  await until('sleep to die', async () => ((await processGone(pgid)) ? true : undefined), 5000);
  t.same(await readdir(dir), [], 'running/ is gone with its records, partial ones included');
});
