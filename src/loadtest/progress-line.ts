// What a run tells the people watching it on stderr: a phase worth a line of its own, and a live line that a
// terminal redraws in place and a log gets every LOG_PROGRESS_MS. The figures go to stdout once the run is over.
import { fitLine } from '../cli/progress.js';
import type { Timers } from '../lib/timers.js';
import { testerTimers } from './clock.js';

export interface Streams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

/** Off a terminal, the live line is written out this often. */
const LOG_PROGRESS_MS = 10_000;
/** On a terminal, the live line is redrawn this often. */
const DRAW_MS = 250;

export class Progress {
  private line = '';
  private readonly stopDrawing: (() => void) | undefined;
  private loggedAt: number;
  constructor(
    private readonly err: Streams['stderr'],
    private readonly timers: Timers = testerTimers,
  ) {
    this.loggedAt = timers.now();
    if (err.isTTY === true) this.stopDrawing = timers.every(DRAW_MS, () => this.draw());
  }
  /** The live line: redrawn on a terminal, else written every LOG_PROGRESS_MS. */
  set(text: string): void {
    this.line = text;
    if (this.err.isTTY !== true && this.timers.now() - this.loggedAt >= LOG_PROGRESS_MS) {
      this.loggedAt = this.timers.now();
      this.err.write(`infra-loadtest: ${text}\n`);
    }
  }
  /** A phase worth a line of its own. */
  say(text: string): void {
    if (this.err.isTTY === true) this.err.write(`\r\x1b[K`);
    this.err.write(`infra-loadtest: ${text}\n`);
  }
  end(): void {
    this.stopDrawing?.();
    if (this.err.isTTY === true) this.err.write('\r\x1b[K');
  }
  private draw(): void {
    if (this.line !== '') this.err.write(`\r${fitLine(this.line, this.err.columns)}\x1b[K`);
  }
}
