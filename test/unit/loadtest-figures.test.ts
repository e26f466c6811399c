// When infra-loadtest says its own machine fell behind: it skipped heartbeats, and nodes went down or jobs ended
// otherwise than expected. Only then: skipped heartbeats alone change no figure, and downs alone are the server's.
import t from 'tap';
import { testerBehind, type Mismatch } from '../../src/loadtest/figures.js';

const mismatch: Mismatch = {
  job: 'j1',
  expected: ['complete'],
  got: 'quorum_failed',
  quorum: 8000,
  ready_min: 8000,
  ready_max: 8000,
  nodes: { was_ready: 4505, unavailable: 3495 },
};

function figures(skipped: number, marked: number | null, mismatches: Mismatch[] = []) {
  const tester: Record<string, number> = skipped > 0 ? { send_skipped: skipped } : {};
  return {
    dropped_by_reason: { server: {}, tester },
    nodes_marked_down: marked,
    quorum_outcomes_correct: { correct: 3 - mismatches.length, total: 3, ambiguous: 0, mismatches },
  };
}

t.test('skipped heartbeats and nodes marked down: the tester says it fell behind', async (t) => {
  const said = testerBehind(figures(47_640, 3953));
  t.match(said, /the tester fell behind: it skipped 47640 heartbeats/);
  t.match(said, /may be the tester's doing/);
});

t.test('skipped heartbeats and a job that ended otherwise than expected: said too', async (t) => {
  t.match(testerBehind(figures(120, 0, [mismatch])), /skipped 120 heartbeats/);
});

t.test('nothing to explain, or nothing skipped: nothing said', async (t) => {
  t.equal(testerBehind(figures(500, 0)), undefined, 'skips that changed no figure');
  t.equal(testerBehind(figures(500, null)), undefined, 'downs unknown (a remote server)');
  t.equal(testerBehind(figures(0, 12, [mismatch])), undefined, 'downs with every heartbeat sent are the server’s');
});
