// The load tester's live line on a manual clock: a terminal has it redrawn in place every 250 ms until the run
// ends; a log gets it at most once every 10 s, and a phase's line at once.
import t from 'tap';
import { Progress, type Streams } from '../../src/loadtest/progress-line.js';
import { ManualClock } from '../support/manual-clock.js';

function progressOn(isTTY: boolean) {
  const clock = new ManualClock();
  const written: string[] = [];
  const err = { isTTY, columns: 80, write: (s: string) => written.push(s) > 0 };
  const progress = new Progress(err as unknown as Streams['stderr'], clock);
  return { clock, written, progress };
}

t.test('on a terminal the live line is redrawn in place every 250 ms, until the run ends', async (t) => {
  const { clock, written, progress } = progressOn(true);
  await clock.advance(250);
  t.same(written, [], 'nothing drawn before there is a line');
  progress.set('jobs: 1/10 finished');
  t.same(written, [], 'set only changes what the next redraw shows');
  await clock.advance(500);
  t.same(written, ['\rjobs: 1/10 finished\x1b[K', '\rjobs: 1/10 finished\x1b[K']);
  progress.say('stopping the nodes');
  t.same(written.slice(2), ['\r\x1b[K', 'infra-loadtest: stopping the nodes\n'], 'a phase clears the line first');
  progress.end();
  await clock.advance(10_000);
  t.equal(written.length, 5, 'one last clearing, then nothing');
  t.equal(clock.pending, 0);
});

t.test('off a terminal the live line is written at most once every 10 s', async (t) => {
  const { clock, written, progress } = progressOn(false);
  t.equal(clock.pending, 0, 'no redraws where nothing is drawn in place');
  progress.set('available 0/5');
  await clock.advance(9999);
  progress.set('available 3/5');
  t.same(written, [], 'within 10 s of the start');
  await clock.advance(1);
  progress.set('available 4/5');
  progress.set('available 5/5');
  t.same(written, ['infra-loadtest: available 4/5\n'], 'the first line 10 s on, then none for 10 s more');
  await clock.advance(10_000);
  progress.set('heartbeats: 1/60 s');
  t.same(written.slice(1), ['infra-loadtest: heartbeats: 1/60 s\n']);
  progress.end();
  t.equal(written.length, 2, 'nothing to clear');
});
