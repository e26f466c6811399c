// Simulated nodes' own records, read from infra-loadtest's --record file (JSON lines, src/loadtest/node-record.ts)
// into the records a real client's log gives (client-records.ts), so that one checker judges both fleets. A line
// that does not pass the schema is skipped: one cut by a kill at the end of the run.
import { nodeRecordLineSchema, type NodeRecordLine } from '../../../src/loadtest/node-record.js';
import { emptyRecord, type ClientRecord, type NodeJobRecord } from './client-records.js';

export function parseLoadtestRecords(text: string, nodes: readonly string[]): Record<string, ClientRecord> {
  const records: Record<string, ClientRecord> = {};
  for (const node of nodes) records[node] = emptyRecord(node);
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      continue;
    }
    const parsed = nodeRecordLineSchema.safeParse(json);
    if (!parsed.success) continue;
    const line = parsed.data;
    apply((records[line.node] ??= emptyRecord(line.node)), line, raw);
  }
  return records;
}

function apply(r: ClientRecord, line: NodeRecordLine, raw: string): void {
  const job = (id: string): NodeJobRecord => {
    const j = (r.jobs[id] ??= { job: id, lines: [] });
    j.lines.push(raw);
    return j;
  };
  const at = line.at;
  switch (line.event) {
    case 'committed':
      job(line.job).committed = { at, command: '' };
      return;
    case 'refused':
      job(line.job).refused = { at, command: '', reason: 'busy', detail: line.reason };
      return;
    case 'ran':
      job(line.job).ran = { at, commandLine: '', pgid: null };
      return;
    case 'run_refused':
      job(line.job).runRefused = { at, detail: 'no commit of this job held' };
      return;
    case 'result':
      job(line.job).outcome = {
        at,
        status: line.status,
        how: `exit status ${line.exit_status}`,
        exitStatus: line.exit_status,
      };
      return;
    case 'aborted':
      job(line.job).aborted = { at, phase: line.phase };
      return;
    case 'crashed':
      // As a client killed mid-command and started again: it reported nothing, and its record shows a new start.
      if (line.job !== null) job(line.job);
      r.starts.push(at);
      return;
    case 'connected':
      r.connections.push({ at, heartbeat: line.heartbeat });
      return;
    case 'dropped':
      r.drops[line.reason] = (r.drops[line.reason] ?? 0) + 1;
      r.firstDrops[line.reason] ??= { at, line: `dropped message (${line.reason})` };
      return;
  }
}
