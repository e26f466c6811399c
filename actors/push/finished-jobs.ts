// Finished jobs answered from memory, newest last, until they hold FINISHED_CACHE_NODES nodes: the latest ones are
// those asked about most, and each answers from how it looked when it ended, serialized once.
import type { JobBody } from '../../src/api/push-jobs.js';
import { parseHttpDate } from '../../src/lib/dates.js';
import type { FinishedJob } from './job-answers.js';

/** Finished jobs answered from memory, counted in nodes. */
const FINISHED_CACHE_NODES = 200_000;

export class FinishedJobs {
  private readonly jobs = new Map<string, FinishedJob>();
  private nodes = 0;

  get(id: string): FinishedJob | undefined {
    return this.jobs.get(id);
  }

  remember(id: string, body: JobBody): void {
    this.jobs.set(id, { body });
    this.nodes += nodeCount(body);
    for (const [oldest, old] of this.jobs) {
      if (this.nodes <= FINISHED_CACHE_NODES || oldest === id) break;
      this.jobs.delete(oldest);
      this.nodes -= nodeCount(old.body);
    }
  }

  forget(id: string): void {
    const job = this.jobs.get(id);
    if (job === undefined) return;
    this.jobs.delete(id);
    this.nodes -= nodeCount(job.body);
  }

  /**
   * What the store gets back of each job here once it lost them: its nodes' statuses and times (their exit statuses
   * and output are gone), as the job's field map holds them.
   */
  *storedFields(): Iterable<[string, Array<readonly [string, { status: string; at: number }]>]> {
    for (const [id, { body }] of this.jobs) {
      const at = (n: string) => parseHttpDate(body.node_updated_at[n] ?? body.created_at) ?? 0;
      yield [
        id,
        Object.entries(body.nodes).flatMap(([status, names]) => names.map((n) => [n, { status, at: at(n) }] as const)),
      ];
    }
  }
}

function nodeCount(body: JobBody): number {
  return Object.values(body.nodes).reduce((n, names) => n + names.length, 0);
}
