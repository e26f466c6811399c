// The progress of a job being waited on: one line redrawn in place on a terminal, else a line per status
// change. Nodes are counted one by one (reference 11: the original counted status names, not nodes).
import type { Terminal } from './cli-connection.js';
import type { JobBody } from '../api/push-jobs.js';
import { isFinished } from '../push/job-states.js';
import { nodeTotal, phaseCounts } from './job-report.js';

/**
 * e.g. `running: 0 voting, 1 ready, 2 running, 3 of 6 finished (2 succeeded, 1 nacked)`; a rollout's says its wave
 * and the nodes still waiting for theirs: `running, wave 2 of 3: 2 voting, ..., 1 of 6 finished (1 succeeded), 3 waiting`.
 */
export function progressText(job: ProgressShape): string {
  const p = phaseCounts(job);
  const finished = p.finished.reduce((n, [, count]) => n + count, 0);
  const detail = p.finished.length === 0 ? '' : ` (${p.finished.map(([status, n]) => `${n} ${status}`).join(', ')})`;
  const wave = job.wave === undefined ? '' : `, wave ${job.wave.current} of ${job.wave.of}`;
  const waiting = p.waiting === 0 ? '' : `, ${p.waiting} waiting`;
  return `${job.status}${wave}: ${p.voting} voting, ${p.ready} ready, ${p.running} running, ${finished} of ${nodeTotal(job)} finished${detail}${waiting}`;
}

/** What the progress line shows: the job's status and nodes, and a rollout's wave. */
export type ProgressShape = Pick<JobBody, 'status' | 'nodes'> & { wave?: { current: number; of: number } };

/** A job as GET shows it, as the progress line reads it. */
export function progressOf(job: JobBody): ProgressShape {
  const r = job.rollout;
  return r === undefined ? job : { ...job, wave: { current: r.current_wave, of: r.waves.length } };
}

/** Cut to the terminal's width: a wrapped line could no longer be redrawn with a carriage return. */
export function fitLine(text: string, columns: number | undefined): string {
  if (columns === undefined || columns < 2 || text.length < columns) return text;
  return `${text.slice(0, columns - 2)}…`;
}

const CLEAR_TO_END = '\x1b[K';

export class ProgressPrinter {
  private lastStatus: string | undefined;
  private lastLine: string | undefined;
  private lastPrinted: string | undefined;

  constructor(private readonly term: Terminal) {}

  update(job: ProgressShape): void {
    if (this.term.isTTY === true) {
      const line = fitLine(progressText(job), this.term.columns);
      if (line !== this.lastLine) this.term.write(`\r${line}${CLEAR_TO_END}`);
      this.lastLine = line;
    } else {
      // A line per status; and the finished job's own counts, when the live view of it was behind.
      const text = progressText(job);
      if (job.status !== this.lastStatus || (isFinished(job.status) && text !== this.lastPrinted)) {
        this.term.write(`${text}\n`);
        this.lastPrinted = text;
      }
    }
    this.lastStatus = job.status;
  }

  /** A line of its own above the progress line (a node event with --verbose). */
  note(text: string): void {
    if (this.term.isTTY === true && this.lastLine !== undefined) {
      this.term.write(`\r${fitLine(text, this.term.columns)}${CLEAR_TO_END}\n${this.lastLine}`);
    } else {
      this.term.write(`${text}\n`);
    }
  }

  /** Ends the redrawn line, so what follows starts on a line of its own. */
  finish(): void {
    if (this.lastLine !== undefined) this.term.write('\n');
    this.lastLine = undefined;
  }
}
