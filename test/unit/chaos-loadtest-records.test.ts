// Simulated nodes' records, read from infra-loadtest's --record lines into the records a real client's log gives:
// the same steps of each job, the gateways it connected to, its drops.
import t from 'tap';
import { parseLoadtestRecords } from '../support/chaos/loadtest-records.js';

const line = (o: Record<string, unknown>) => JSON.stringify(o);

t.test('each node’s jobs, connections and drops; a node with no line has an empty record', async (t) => {
  const text = [
    line({ event: 'connected', at: 1, node: 'sim-1', heartbeat: 'tcp://127.0.0.1:4002' }),
    line({ event: 'committed', at: 2, node: 'sim-1', job: 'j1' }),
    line({ event: 'ran', at: 3, node: 'sim-1', job: 'j1' }),
    line({ event: 'result', at: 9, node: 'sim-1', job: 'j1', status: 'succeeded', exit_status: 0 }),
    line({ event: 'refused', at: 4, node: 'sim-1', job: 'j2', reason: 'busy with j1' }),
    line({ event: 'aborted', at: 10, node: 'sim-1', job: 'j3', phase: 'committed' }),
    line({ event: 'run_refused', at: 11, node: 'sim-1', job: 'j4' }),
    line({ event: 'dropped', at: 12, node: 'sim-1', reason: 'replay' }),
    line({ event: 'dropped', at: 13, node: 'sim-1', reason: 'replay' }),
    line({ event: 'crashed', at: 14, node: 'sim-1', job: 'j5' }),
    '{"event":"committed","at":15,"node":"sim-1"', // cut by a kill
    line({ event: 'bogus', at: 16, node: 'sim-1' }),
  ].join('\n');
  const r = parseLoadtestRecords(text, ['sim-1', 'sim-2']);
  t.same(Object.keys(r).sort(), ['sim-1', 'sim-2']);
  const one = r['sim-1'];
  t.same(one?.connections, [{ at: 1, heartbeat: 'tcp://127.0.0.1:4002' }]);
  t.same(one?.jobs.j1?.committed?.at, 2);
  t.same(one?.jobs.j1?.ran?.at, 3);
  t.same(one?.jobs.j1?.outcome, { at: 9, status: 'succeeded', how: 'exit status 0', exitStatus: 0 });
  t.match(one?.jobs.j2?.refused, { at: 4, detail: 'busy with j1' });
  t.same(one?.jobs.j3?.aborted, { at: 10, phase: 'committed' });
  t.same(one?.jobs.j4?.runRefused?.at, 11);
  t.same(one?.drops, { replay: 2 });
  t.same(one?.firstDrops.replay?.at, 12);
  t.equal(one?.jobs.j5?.outcome, undefined, 'a crash reports nothing');
  t.same(one?.starts, [14], 'and counts as the client started again');
  t.same(r['sim-2']?.jobs, {});
});
