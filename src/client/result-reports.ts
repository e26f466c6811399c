// The client's side of ack_result: the results it reported and the server has not acknowledged, sent again on new
// channels and, while no ack comes, at a growing spacing (the decisions are unacked-results.ts's).
import type { Connection } from './connection.js';
import type { JobAnswer } from './job-runner.js';
import type { Logger } from './logger.js';
import {
  acknowledgeResult,
  holdResult,
  isResult,
  MAX_UNACKED,
  resultsToResend,
  type UnackedResults,
} from './unacked-results.js';

/** Where results go again: the connection in use. */
export type ResendChannel = Pick<Connection, 'queued' | 'sendCommand'>;

export class ResultReports {
  private unacked: UnackedResults = [];

  constructor(private readonly log: Logger) {}

  /** Results waiting for their ack. */
  get waiting(): number {
    return this.unacked.length;
  }

  /** A job answer handed to the command channel at `at`: a result is kept until the server acknowledges it. */
  sent(answer: JobAnswer, at: number): void {
    if (!isResult(answer)) return;
    const { results, dropped } = holdResult(this.unacked, answer, at);
    this.unacked = results;
    if (dropped !== undefined)
      this.log.warn(
        `job ${dropped}: its result was never acknowledged, and is no longer sent again (${MAX_UNACKED} newer wait)`,
      );
  }

  /** The server is done with the job's result (ack_result). */
  acknowledged(jobId: string): void {
    this.unacked = acknowledgeResult(this.unacked, jobId);
  }

  /**
   * Sends again on `connection` what waits for an ack: everything when `connected` (new channels: the gateway the
   * results went to may have died with them), else what has waited `everyMs` since it was last sent, then twice as
   * long, and so on. A result still waiting to be written is not queued twice.
   */
  resend(connection: ResendChannel, at: number, everyMs: number, connected: boolean): void {
    if (this.unacked.length === 0) return;
    const { results, due } = resultsToResend(this.unacked, at, everyMs, {
      connected,
      queued: (answer) => connection.queued(answer),
    });
    this.unacked = results;
    for (const answer of due) {
      this.log.info(`job ${answer.job_id}: reporting ${answer.type} again, as the server has not acknowledged it`);
      connection.sendCommand(answer);
    }
  }
}
