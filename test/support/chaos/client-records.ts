// A node's own record of a run, read from its push-jobs-client's log (client.log, `ISO-TIME LEVEL message` lines,
// as src/client/job-runner.ts and push-client.ts write them): per job what it committed to, ran, reported and
// aborted, plus the messages it dropped by reason and its reconfigures. Pure: it takes the log's text.

/** What one node's client did with one job, each step with the time it logged it (epoch ms). */
export interface NodeJobRecord {
  job: string;
  committed?: { at: number; command: string };
  /** It refused the commit (nack_commit), with the reason it sent. */
  refused?: { at: number; command: string; reason: string; detail: string };
  ran?: { at: number; commandLine: string; pgid: number | null };
  /** It refused a run order (nack_run): it held no commit of this job. */
  runRefused?: { at: number; detail: string };
  /** The result it reported: `succeeded` or `failed`, how the command ended, and the exit status it sent. */
  outcome?: { at: number; status: 'succeeded' | 'failed'; how: string; exitStatus: number | null };
  /** The server told it to abort the job (or to reset, holding it) in this phase. */
  aborted?: { at: number; phase: string };
  /** Its client stopped (SIGTERM) holding the job: it told the server `aborted` itself. */
  shutdown?: { at: number; phase: string };
  /** Its own run_timeout stopped the command. */
  timedOutAt?: number;
  /** The job's lines as logged, for a report. */
  lines: string[];
}

export interface ClientRecord {
  node: string;
  jobs: Record<string, NodeJobRecord>;
  /**
   * Messages from the server dropped, by reason. A lower bound: the client logs a reason at most once a minute and
   * counts the drops it did not log only in its next line of that reason.
   */
  drops: Record<string, number>;
  /** The first logged line of each drop reason, and when. */
  firstDrops: Record<string, { at: number; line: string }>;
  reconfigures: Array<{ at: number; why: string }>;
  /** Times the client started: more than one means its process was started again. */
  starts: number[];
  /** Where it connected, in order: `tcp://HOST:PORT` of the heartbeat channel. */
  connections: Array<{ at: number; heartbeat: string }>;
  /** Times it found the server silent past its threshold. */
  offline: number[];
  /** Lines the parser took for no step above, at WARN or ERROR. */
  otherWarnings: string[];
}

const LINE = /^(\S+) (DEBUG|INFO|WARN|ERROR) (.*)$/;
const JOB = /^job (\S+): (.*)$/;
const DROP = /^dropped message \((\w+)\): (.*?)(?:; (\d+) more \w+ drops not logged)?$/;

/** Parses a whole client.log; lines it cannot read are skipped (a line cut by a kill, stderr text). */
export function parseClientLog(node: string, text: string): ClientRecord {
  const record = emptyRecord(node);
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (m === null) continue;
    const at = Date.parse(m[1] ?? '');
    if (Number.isNaN(at)) continue;
    const level = m[2] ?? '';
    const message = m[3] ?? '';
    const job = JOB.exec(message);
    const taken =
      job !== null ? jobStep(record, at, job[1] ?? '', job[2] ?? '', line) : clientStep(record, at, message);
    if (!taken && (level === 'WARN' || level === 'ERROR')) record.otherWarnings.push(line);
  }
  return record;
}

/** One `job ID: ...` line; false when it is none of the steps the record keeps. */
function jobStep(record: ClientRecord, at: number, id: string, rest: string, line: string): boolean {
  const r = (record.jobs[id] ??= { job: id, lines: [] });
  r.lines.push(line);
  let m: RegExpExecArray | null;
  if ((m = /^committed to '(.*)'$/.exec(rest))) r.committed = { at, command: m[1] ?? '' };
  else if ((m = /^refused '(.*)' \((\w+)\): (.*)$/.exec(rest)))
    r.refused = { at, command: m[1] ?? '', reason: m[2] ?? '', detail: m[3] ?? '' };
  else if ((m = /^running '(.*)' as process group (\d+|\(not started\))$/.exec(rest)))
    r.ran = { at, commandLine: m[1] ?? '', pgid: /^\d+$/.test(m[2] ?? '') ? Number(m[2]) : null };
  else if ((m = /^run refused, (.*)$/.exec(rest))) r.runRefused = { at, detail: m[1] ?? '' };
  else if ((m = /^(succeeded|failed) \((.*)\)$/.exec(rest))) {
    const how = m[2] ?? '';
    const exit = /^exit status (\d+)$/.exec(how);
    r.outcome = {
      at,
      status: m[1] === 'succeeded' ? 'succeeded' : 'failed',
      how,
      exitStatus: exit === null ? null : Number(exit[1]),
    };
  } else if ((m = /^aborting \((\w+)\)$/.exec(rest))) r.aborted = { at, phase: m[1] ?? '' };
  else if ((m = /^stopping for shutdown \((\w+)\)$/.exec(rest))) r.shutdown = { at, phase: m[1] ?? '' };
  else if (/^run_timeout of \S+ s reached/.test(rest)) r.timedOutAt = at;
  else return rest === 'aborted';
  return true;
}

/** A line of the client itself; false when it is none of the events the record keeps. */
function clientStep(record: ClientRecord, at: number, message: string): boolean {
  let m: RegExpExecArray | null;
  if ((m = DROP.exec(message))) {
    const reason = m[1] ?? '';
    record.drops[reason] = (record.drops[reason] ?? 0) + 1 + Number(m[3] ?? 0);
    record.firstDrops[reason] ??= { at, line: message };
  } else if ((m = /^reconfiguring: (.*)$/.exec(message))) record.reconfigures.push({ at, why: m[1] ?? '' });
  else if ((m = /^connected to (\S+) and /.exec(message))) record.connections.push({ at, heartbeat: m[1] ?? '' });
  else if (/ starting: node /.test(message)) record.starts.push(at);
  else if (/^no heartbeat from the server for /.test(message)) record.offline.push(at);
  else return false;
  return true;
}

/** A node's record before anything of it was read. */
export function emptyRecord(node: string): ClientRecord {
  return {
    node,
    jobs: {},
    drops: {},
    firstDrops: {},
    reconfigures: [],
    starts: [],
    connections: [],
    offline: [],
    otherWarnings: [],
  };
}
