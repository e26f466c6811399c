// infra-loadtest's --record lines: each event a node tells its recorder is one JSON line with the node's name and
// the time, and reads back through the schema a checker uses.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { fileRecorder, nodeRecordLineSchema, type NodeRecordEvent } from '../../src/loadtest/node-record.js';

t.test('every event is a whole line naming its node and time, read back as written', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'node-record-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'nodes.jsonl');
  let clock = 1000;
  const n1 = fileRecorder(file, 'lt-1', () => clock++);
  const n2 = fileRecorder(file, 'lt-2', () => clock++);
  const events: NodeRecordEvent[] = [
    { event: 'connected', heartbeat: 'tcp://127.0.0.1:4002' },
    { event: 'committed', job: 'j1' },
    { event: 'refused', job: 'j2', reason: 'busy with j1' },
    { event: 'ran', job: 'j1' },
    { event: 'result', job: 'j1', status: 'succeeded', exit_status: 0 },
    { event: 'aborted', job: 'j3', phase: 'committed' },
    { event: 'run_refused', job: 'j4' },
    { event: 'crashed', job: null },
    { event: 'dropped', reason: 'replay' },
  ];
  for (const e of events) n1(e);
  n2({ event: 'committed', job: 'j1' });
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  t.equal(lines.length, events.length + 1);
  const read = lines.map((l) => nodeRecordLineSchema.parse(JSON.parse(l)));
  t.same(
    read.slice(0, events.length),
    events.map((e, i) => ({ ...e, at: 1000 + i, node: 'lt-1' })),
  );
  t.same(read.at(-1), { event: 'committed', job: 'j1', at: 1000 + events.length, node: 'lt-2' });
});
