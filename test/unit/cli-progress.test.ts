// The progress of a job being waited on: the line's text, counted in nodes, and how it is drawn on a
// terminal (redrawn in place) and elsewhere (a line per status change).
import t from 'tap';
import { fitLine, ProgressPrinter, progressText } from '../../src/cli/progress.js';

t.test('the line counts nodes, not status names (reference 11: the Running count)', async (t) => {
  t.equal(
    progressText({ status: 'voting', nodes: { new: ['a', 'b', 'c'], ready: ['d'] } }),
    'voting: 3 voting, 1 ready, 0 running, 0 of 4 finished',
  );
  t.equal(
    progressText({
      status: 'running',
      nodes: { running: ['a', 'b'], ready: ['c'], succeeded: ['d', 'e'], nacked: ['f'] },
    }),
    'running: 0 voting, 1 ready, 2 running, 3 of 6 finished (2 succeeded, 1 nacked)',
  );
  t.equal(
    progressText({ status: 'complete', nodes: { failed: ['x'], succeeded: ['y'] } }),
    'complete: 0 voting, 0 ready, 0 running, 2 of 2 finished (1 succeeded, 1 failed)',
  );
});

t.test('a line wider than the terminal is cut, so a carriage return can redraw it', async (t) => {
  t.equal(fitLine('abcdefghij', 8), 'abcdef…');
  t.equal(fitLine('abcdefghij', 11), 'abcdefghij');
  t.equal(fitLine('abcdefghij', undefined), 'abcdefghij');
});

function recorder(isTTY: boolean, columns?: number) {
  const writes: string[] = [];
  return { writes, term: { isTTY, columns, write: (d: string | Uint8Array) => writes.push(String(d)) } };
}

t.test('on a terminal one line is redrawn in place, only when it changes, and ended once', async (t) => {
  const { writes, term } = recorder(true, 200);
  const p = new ProgressPrinter(term);
  p.update({ status: 'voting', nodes: { new: ['a', 'b'] } });
  p.update({ status: 'voting', nodes: { new: ['a', 'b'] } });
  p.update({ status: 'voting', nodes: { new: ['a'], ready: ['b'] } });
  p.update({ status: 'complete', nodes: { succeeded: ['a', 'b'] } });
  p.finish();
  t.same(writes, [
    '\rvoting: 2 voting, 0 ready, 0 running, 0 of 2 finished\x1b[K',
    '\rvoting: 1 voting, 1 ready, 0 running, 0 of 2 finished\x1b[K',
    '\rcomplete: 0 voting, 0 ready, 0 running, 2 of 2 finished (2 succeeded)\x1b[K',
    '\n',
  ]);
});

t.test('elsewhere a plain line is written each time the job status changes', async (t) => {
  const { writes, term } = recorder(false);
  const p = new ProgressPrinter(term);
  p.update({ status: 'voting', nodes: { new: ['a', 'b'] } });
  p.update({ status: 'voting', nodes: { new: ['a'], ready: ['b'] } });
  p.update({ status: 'running', nodes: { running: ['a', 'b'] } });
  p.update({ status: 'complete', nodes: { succeeded: ['a'], failed: ['b'] } });
  p.finish();
  t.same(writes, [
    'voting: 2 voting, 0 ready, 0 running, 0 of 2 finished\n',
    'running: 0 voting, 0 ready, 2 running, 0 of 2 finished\n',
    'complete: 0 voting, 0 ready, 0 running, 2 of 2 finished (1 succeeded, 1 failed)\n',
  ]);
});
